// SPDX-License-Identifier: GPL-2.0
//
// kpgo's entry sampling: an LLVM pass plugin for code compiled with
// -fprofile-generate (clang -fpass-plugin=, rustc -Zllvm-plugins=).
//
// The shape is Arnold and Ryder's (PLDI 2001): two versions of the code,
// one counted and one not, and a check where control enters.
//
// At the pipeline's start, before instrumentation, every function gets a
// twin: a clone marked noprofile, so that instrumentation leaves it alone,
// whose direct calls go to its callees' twins (not a weak callee's: the
// linker may choose another definition).  The inliner (which inlines only
// between functions that agree on noprofile) then builds each twin from
// uninstrumented bodies, optimized as if there were no profile.  The
// function itself is instrumented as without the plugin, so its profile
// fits a build without it; but the twin's uses of what the function uses
// can change a few of the PGO pre-inliner's decisions, which shape the
// hashed CFG (22 of 22,674 kernel functions out of date).
//
// At the optimizer's end, a function that can be entered from outside a
// burst (visible outside the module, its address taken, or called by code
// that runs outside bursts) becomes a dispatcher: unless this CPU's burst
// flag is set it tail-calls its twin, else its own body, moved to
// F.kpgo_counted.  Between bursts a CPU runs the twins, which enter no
// test among themselves; a call from another module, or through a
// pointer, pays a compare with memory and a taken branch.  With
// -kpgo-entry-extern-twins (the kernel's vmlinux, whose final link
// defines F.kpgo_twin as F where F has none), an external F's twin is
// external too, and twins call other modules' functions' twins by name:
// a call from another object enters no test either.  In a burst,
// whole call trees are counted.  A function's address stays its own, so
// address identity, kCFI and function pointers are unchanged.  Each twin
// follows its dispatcher, and what runs only in bursts goes to
// .text.unlikely.  Twins that no dispatcher reaches are deleted; in a
// module that was not instrumented, every twin is folded back into its
// function.
//
// The flag: a byte named by -kpgo-entry-flag (default kpgo_entry_burst),
// read %gs-relative (the kernel's per-CPU variables on x86-64) or, with
// -kpgo-entry-flag-tls, as a thread-local variable (the host's tests).
//
// Not twinned: variadic functions (a tail call cannot forward their
// arguments portably), naked functions, functions that return twice,
// functions with a parameter musttail cannot pass (inalloca,
// preallocated), functions whose block addresses are taken (a computed
// goto's table would send the twin into the original's blocks), and, for
// the kernel's objtool, functions that do not return and those marked
// STACK_FRAME_NON_STANDARD, those of kprobes' blacklist (NOKPROBE_SYMBOL)
// and of error injection's list, and functions whose asm defines a named
// label.  Where such a function can run outside a burst (or a function
// whose twin was not kept from the start, and may have been specialized
// to its twinned callers, is called from one), its counter updates and hook calls are each put under the same
// test instead, so that they too count only in bursts (all counts keep
// one scale) at the cost of a test per update, as LLVM's own
// -sampled-instrumentation does everywhere.  -kpgo-entry-stats prints, per
// module, how many were twinned and why the rest were not, and what the
// optimizer's end did.

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#if __has_include("llvm/Plugins/PassPlugin.h")
#include "llvm/Plugins/PassPlugin.h" /* LLVM 22 and later */
#else
#include "llvm/Passes/PassPlugin.h"
#endif
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace llvm;

static cl::opt<std::string> FlagName("kpgo-entry-flag", cl::init("kpgo_entry_burst"),
				     cl::desc("kpgo: the per-CPU byte that is set in a burst"));
static cl::opt<bool> FlagTls("kpgo-entry-flag-tls", cl::init(false),
			     cl::desc("kpgo: the burst flag is thread-local, not %gs-relative"));
static cl::opt<bool> ExternTwins(
	"kpgo-entry-extern-twins", cl::init(false),
	cl::desc("kpgo: a twin of an external function is external too, and twins call "
		 "the twins of other objects' functions (the final link must define "
		 "F.kpgo_twin as F where F has none)"));
static cl::opt<bool> Stats("kpgo-entry-stats", cl::init(false),
			   cl::desc("kpgo: print how many functions were twinned"));

namespace {

// Whether P addresses a profile counter: a __profc_ global (or one in the
// counters' section), directly, through GEPs and casts, or relocated at
// run time (inttoptr(ptrtoint(counter) + bias)).
bool isCounterAddress(Value *P)
{
	SmallVector<Value *, 8> Work{ P };
	SmallPtrSet<Value *, 8> Seen;

	while (!Work.empty()) {
		Value *V = Work.pop_back_val();
		if (!Seen.insert(V).second)
			continue;
		if (auto *G = dyn_cast<GlobalVariable>(V)) {
			if (G->getName().starts_with("__profc_") ||
			    G->getSection().contains("__llvm_prf_cnts"))
				return true;
		} else if (auto *GEP = dyn_cast<GEPOperator>(V)) {
			Work.push_back(GEP->getPointerOperand());
		} else if (auto *Phi = dyn_cast<PHINode>(V)) {
			// Stores of two counters merged by SimplifyCFG.
			for (Value *Incoming : Phi->incoming_values())
				Work.push_back(Incoming);
		} else if (auto *Select = dyn_cast<SelectInst>(V)) {
			Work.push_back(Select->getTrueValue());
			Work.push_back(Select->getFalseValue());
		} else if (auto *Op = dyn_cast<Operator>(V)) {
			switch (Op->getOpcode()) {
			case Instruction::BitCast:
			case Instruction::AddrSpaceCast:
			case Instruction::IntToPtr:
			case Instruction::PtrToInt:
			case Instruction::Add:
				for (Value *Operand : Op->operands())
					Work.push_back(Operand);
				break;
			default:
				break;
			}
		}
	}
	return false;
}

bool isProfileHook(const CallBase &Call)
{
	const Function *Callee = Call.getCalledFunction();

	return Callee && Callee->getName().starts_with("__llvm_profile_instrument_");
}

// The instructions that update counters or call the hooks.
SmallVector<Instruction *, 16> profileUpdates(Function &F)
{
	SmallVector<Instruction *, 16> Updates;

	for (Instruction &I : instructions(F)) {
		if (auto *Store = dyn_cast<StoreInst>(&I)) {
			if (isCounterAddress(Store->getPointerOperand()))
				Updates.push_back(&I);
		} else if (auto *RMW = dyn_cast<AtomicRMWInst>(&I)) {
			if (RMW->use_empty() && isCounterAddress(RMW->getPointerOperand()))
				Updates.push_back(&I);
		} else if (auto *Call = dyn_cast<CallBase>(&I)) {
			if (isProfileHook(*Call))
				Updates.push_back(&I);
		}
	}
	return Updates;
}

// The functions that the kernel names by address in a table, for a tool
// that cannot know a twin: STACK_FRAME_NON_STANDARD (objtool, a pointer in
// .discard.func_stack_frame_non_standard), NOKPROBE_SYMBOL (kprobes'
// blacklist, an address in _kprobe_blacklist: a probe on a twin of a
// function kprobes itself runs would recurse) and ALLOW_ERROR_INJECTION
// (a struct in _error_injection_whitelist whose first field is the
// address: an error injected at F must reach every call of it).
SmallPtrSet<const Function *, 8> namedByTables(Module &M)
{
	SmallPtrSet<const Function *, 8> Named;

	for (GlobalVariable &G : M.globals()) {
		if (!G.hasInitializer() ||
		    !(G.getSection().starts_with(".discard.func_stack_frame") ||
		      G.getSection() == "_kprobe_blacklist" ||
		      G.getSection() == "_error_injection_whitelist"))
			continue;
		Value *Entry = G.getInitializer();
		if (auto *Fields = dyn_cast<ConstantStruct>(Entry))
			Entry = Fields->getOperand(0);
		if (auto *Cast = dyn_cast<ConstantExpr>(Entry))
			if (Cast->getOpcode() == Instruction::PtrToInt)
				Entry = Cast->getOperand(0);
		if (auto *F = dyn_cast<Function>(Entry->stripPointerCasts()))
			Named.insert(F);
	}
	return Named;
}

// Whether the asm text defines a label that is not numeric and not made
// unique per instance with %=.
bool definesNamedLabel(StringRef Text)
{
	SmallVector<StringRef, 16> Lines, Statements;

	Text.split(Lines, '\n');
	for (StringRef Line : Lines)
		Line.split(Statements, ';');
	for (StringRef Statement : Statements) {
		StringRef Label = Statement.trim();
		size_t Colon = Label.find(':');
		if (Colon == StringRef::npos || Colon == 0)
			continue;
		Label = Label.take_front(Colon);
		if (Label.contains("%=") || all_of(Label, isDigit))
			continue;
		if (all_of(Label, [](char C) { return isAlnum(C) || C == '_' || C == '.' || C == '$'; }))
			return true;
	}
	return false;
}

// Why F cannot have a twin, or nullptr.
const char *cannotTwin(const Function &F, const SmallPtrSetImpl<const Function *> &Named)
{
	if (F.isVarArg())
		return "variadic";
	// objtool finds a function that does not return by following its
	// calls and jumps: a conditional tail call to a twin would hide it.
	if (F.doesNotReturn())
		return "noreturn";
	if (Named.contains(&F))
		return "named in a table (objtool's, kprobes', error injection's)";
	// A computed goto's table holds the addresses of F's own blocks: a
	// clone would jump from its body into F's, with another frame.
	for (const BasicBlock &BB : F)
		if (BB.hasAddressTaken())
			return "block addresses taken";
	if (F.hasFnAttribute(Attribute::Naked))
		return "naked";
	if (F.hasFnAttribute(Attribute::ReturnsTwice))
		return "returns_twice";
	for (const Argument &A : F.args())
		if (A.hasInAllocaAttr() || A.hasPreallocatedAttr())
			return "inalloca or preallocated parameter";
	// A label that an asm statement defines would be defined twice (the
	// kernel's int3_selftest_ip); numeric labels and %= are local to
	// each copy.
	for (const Instruction &I : instructions(F))
		if (const auto *Call = dyn_cast<CallBase>(&I))
			if (const auto *Asm = dyn_cast<InlineAsm>(Call->getCalledOperand()))
				if (definesNamedLabel(Asm->getAsmString()))
					return "asm defines a label";
	return nullptr;
}

constexpr StringRef TwinSuffix = ".kpgo_twin";
// A twin's mark, with its function's name: the end pass finds twins by it,
// not by a name the optimizer may change.
constexpr StringRef TwinOfAttribute = "kpgo-twin-of";
// A twin that was kept from the start (llvm.compiler.used), so that no
// interprocedural pass specialized it to the calls it had: only such a
// twin may be called from a dispatcher, with any arguments.
constexpr StringRef DispatchableAttribute = "kpgo-twin-dispatchable";
// The module flag that says the end pass ran (LTO may run it again).
constexpr StringRef DoneFlag = "kpgo-entry-sampling";

// The twin: F's clone, internal, noprofile, without a kCFI type (only
// direct calls reach it).  Its ftrace entry stays: it is traced as
// F.kpgo_twin.
Function *makeTwin(Function &F)
{
	ValueToValueMapTy Map;
	Function *Twin = CloneFunction(&F, Map);

	Twin->setName(F.getName() + TwinSuffix);
	Twin->setLinkage(GlobalValue::InternalLinkage);
	Twin->setVisibility(GlobalValue::DefaultVisibility);
	Twin->setDSOLocal(true);
	Twin->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
	// Another module's copy of F's comdat may be the one kept, and the
	// twins that call this one would then call into a discarded section.
	Twin->setComdat(nullptr);
	Twin->addFnAttr(Attribute::NoProfile);
	Twin->addFnAttr(TwinOfAttribute, F.getName());
	Twin->setMetadata(LLVMContext::MD_kcfi_type, nullptr);
	Twin->setMetadata(LLVMContext::MD_type, nullptr);
	return Twin;
}

// The burst flag's value, loaded at B's insertion point.
Value *loadBurst(IRBuilder<> &B, GlobalVariable &Flag)
{
	Value *Address;

	if (FlagTls)
		Address = B.CreateThreadLocalAddress(&Flag);
	else
		Address = B.CreateIntToPtr(B.CreatePtrToInt(&Flag, B.getInt64Ty()),
					   PointerType::get(B.getContext(), 256));
	LoadInst *Burst = B.CreateLoad(B.getInt8Ty(), Address, "kpgo.burst");
	Burst->setVolatile(true);
	return B.CreateICmpNE(Burst, B.getInt8(0));
}

// A function that cannot have a twin: each update under the test.
void guardUpdates(Function &F, GlobalVariable &Flag)
{
	for (Instruction *Update : profileUpdates(F)) {
		IRBuilder<> B(Update);
		Instruction *Then = SplitBlockAndInsertIfThen(
			loadBurst(B, Flag), Update->getIterator(), false,
			MDBuilder(F.getContext()).createBranchWeights(1, 1000));
		Update->moveBefore(Then->getIterator());
	}
}

// A block of F that tail-calls TARGET with F's arguments and returns.
BasicBlock *tailCallBlock(Function &F, Function &Target, const char *Name)
{
	LLVMContext &Context = F.getContext();
	BasicBlock *Block = BasicBlock::Create(Context, Name, &F);
	IRBuilder<> B(Block);
	SmallVector<Value *, 8> Arguments;
	SmallVector<AttributeSet, 8> Parameters;

	for (Argument &A : F.args()) {
		Arguments.push_back(&A);
		Parameters.push_back(F.getAttributes().getParamAttrs(A.getArgNo()));
	}
	CallInst *Call = B.CreateCall(&Target, Arguments);
	Call->setCallingConv(Target.getCallingConv());
	Call->setAttributes(AttributeList::get(Context, AttributeSet(),
					       F.getAttributes().getRetAttrs(), Parameters));
	Call->setTailCallKind(CallInst::TCK_MustTail);
	if (F.getReturnType()->isVoidTy())
		B.CreateRetVoid();
	else
		B.CreateRet(Call);
	return Block;
}

// F becomes a dispatcher: unless the burst flag is set, it tail-calls
// TWIN, else its own body, which moves to an internal function,
// F.kpgo_counted.  With the body in F, the backend put F's prologue
// (saving the registers the body uses) before the test in half of the
// kernel's functions, and a call to a twin paid it and its epilogue.  F
// keeps its name, address, kCFI type and ftrace entry; the body keeps
// F's debug information, and its counters are F's in the profile (the
// names were set at instrumentation).
void addEntryTest(Function &F, Function &Twin, GlobalVariable &Flag)
{
	LLVMContext &Context = F.getContext();
	Function *Counted = Function::Create(F.getFunctionType(), GlobalValue::InternalLinkage,
					     F.getAddressSpace(), F.getName() + ".kpgo_counted",
					     F.getParent());
	Counted->copyAttributesFrom(&F);
	Counted->setLinkage(GlobalValue::InternalLinkage);
	Counted->setVisibility(GlobalValue::DefaultVisibility);
	Counted->setDSOLocal(true);
	Counted->setUnnamedAddr(GlobalValue::UnnamedAddr::Global);
	// Only F reaches it: discarded with F's comdat.
	Counted->setComdat(F.getComdat());
	for (const char *Kind : { "fentry-call", "patchable-function-entry",
				  "patchable-function-prefix" })
		Counted->removeFnAttr(Kind);
	Counted->splice(Counted->begin(), &F);
	for (auto [From, To] : zip(F.args(), Counted->args())) {
		To.takeName(&From);
		From.replaceAllUsesWith(&To);
	}
	// What describes the body goes with it; what describes F's address
	// (kCFI and CFI types, -fsanitize=function's signature) stays.
	for (unsigned Kind : { LLVMContext::MD_dbg, LLVMContext::MD_prof,
			       LLVMContext::MD_section_prefix }) {
		Counted->setMetadata(Kind, F.getMetadata(Kind));
		F.setMetadata(Kind, nullptr);
	}
	for (unsigned Kind : { LLVMContext::MD_kcfi_type, LLVMContext::MD_type,
			       LLVMContext::MD_func_sanitize })
		Counted->setMetadata(Kind, nullptr);
	F.setPersonalityFn(nullptr);

	// The layout of a kernel without bursts: each dispatcher just before
	// its twin, and the counted bodies, which run in bursts only, apart
	// with the code the compiler calls cold (the kernel links it after
	// the rest of its text).  A function placed in a section of its own
	// (__init, __sched, ...) keeps its body there.
	F.getParent()->getFunctionList().splice(std::next(F.getIterator()),
						F.getParent()->getFunctionList(),
						Twin.getIterator());
	if (!F.hasSection())
		Counted->setSection(".text.unlikely");

	BasicBlock *Entry = BasicBlock::Create(Context, "kpgo.entry", &F);
	BasicBlock *ToCounted = tailCallBlock(F, *Counted, "kpgo.counted");
	BasicBlock *ToTwin = tailCallBlock(F, Twin, "kpgo.twin");
	IRBuilder<> B(Entry);
	// Bursts are rare: the twin is the likely way.
	B.CreateCondBr(loadBurst(B, Flag), ToCounted, ToTwin,
		       MDBuilder(Context).createBranchWeights(1, 1000));
}

// Whether F's address is taken or F is used other than as a callee.
bool hasNonCallUse(const Function &F)
{
	for (const Use &U : F.uses()) {
		const auto *Call = dyn_cast<CallBase>(U.getUser());
		if (!Call || !Call->isCallee(&U))
			return true;
	}
	return false;
}

// An entry test or a twin of the optimizer's end can be reached from
// outside the module, or from a caller that will have no twin (noinstr
// code, a function that cannot be twinned) or that is always inlined,
// maybe into such code: keep the twin until then, so that no pass
// specializes it to its twinned callers and F can dispatch to it (else
// F's updates would each be guarded, as x86's x64_sys_call's 473 are,
// called from do_syscall_x64(), always inlined into noinstr
// do_syscall_64()).
bool twinNeededAtEnd(const Function &F, const MapVector<Function *, Function *> &TwinOf)
{
	if (F.hasAvailableExternallyLinkage())
		return false; /* not emitted: no entry test */
	if (!F.hasLocalLinkage() || hasNonCallUse(F))
		return true;
	for (const User *U : F.users()) {
		Function *Caller = const_cast<Function *>(cast<CallBase>(U)->getFunction());
		if (!TwinOf.count(Caller) || Caller->hasFnAttribute(Attribute::AlwaysInline))
			return true;
	}
	return false;
}

// With -kpgo-entry-extern-twins: the twin of F, an external function that
// tests at entry, becomes external as F.kpgo_twin, so that other objects'
// twins call it directly rather than through F's test.  It was kept from
// the start (DispatchableAttribute): no pass specialized it to this
// object's calls.  A function the linker may replace (weak) keeps its twin
// to itself: another object's F.kpgo_twin must be the linked F's twin.
bool exportTwin(Function &F, Function &Twin)
{
	if (!F.hasExternalLinkage())
		return false;
	// makeTwin() named it; no declaration of that name exists yet
	// (callRemoteTwins() comes after, and declares only undefined names).
	Twin.setLinkage(GlobalValue::ExternalLinkage);
	Twin.setVisibility(GlobalValue::HiddenVisibility);
	Twin.setDSOLocal(true);
	Twin.setUnnamedAddr(GlobalValue::UnnamedAddr::None);
	return true;
}

// Whether a call to the declared CALLEE may go to CALLEE.kpgo_twin
// instead.  Not where the name itself matters: a library function the
// code generator knows by its name (memcmp with a constant size becomes
// loads, ...), a static call's trampoline (objtool finds static calls by
// the __SCT__ name), a function that does not return (objtool's list of
// them, and dead ends it follows by name), one defined by this module's
// asm (a local label: no F.kpgo_twin for the link to define), an
// extern_weak one (no alias of null).  Nor where no twin can exist: a
// variadic function, the sanitizers' runtimes (built without sampling).
bool mayCallRemoteTwin(const CallBase &Call, const Function &Callee, const TargetLibraryInfo &TLI)
{
	static const char *const Runtimes[] = { "__asan_",  "__kasan_", "__hwasan_",
						"__tsan_",  "__kcsan_", "__msan_",
						"__kmsan_", "__ubsan_", "__sanitizer_",
						"__llvm_profile_" };
	StringRef Name = Callee.getName();
	LibFunc Known;

	if (!Callee.isDeclaration() || Callee.isIntrinsic() || Callee.hasExternalWeakLinkage() ||
	    Callee.isVarArg() || Callee.doesNotReturn() || Call.doesNotReturn() ||
	    Name.ends_with(TwinSuffix) || Name.starts_with("__SCT__") ||
	    Callee.getParent()->getModuleInlineAsm().find(Name.str()) != std::string::npos)
		return false;
	for (const char *Prefix : Runtimes)
		if (Name.starts_with(Prefix))
			return false;
	return !TLI.getLibFunc(Callee, Known);
}

// Whether F opens a user-access region (x86's stac, as an alternative;
// 6.12 spells it in bytes): objtool knows the functions
// that may be called inside one by name.
bool opensUserAccess(const Function &F)
{
	for (const Instruction &I : instructions(F))
		if (const auto *Call = dyn_cast<CallBase>(&I))
			if (const auto *Asm = dyn_cast<InlineAsm>(Call->getCalledOperand())) {
				StringRef Text = Asm->getAsmString();
				if (Text.contains("stac") || Text.contains("0x0f,0x01,0xcb"))
					return true;
			}
	return false;
}

// TWIN's calls to functions declared here go to their twins, F.kpgo_twin,
// which the final link defines as F itself where F has none (no plugin, no
// twin, not instrumented).  Returns how many calls it changed.
unsigned callRemoteTwins(Function &Twin, const TargetLibraryInfo &TLI)
{
	Module &M = *Twin.getParent();
	unsigned Changed = 0;

	if (opensUserAccess(Twin))
		return 0;
	for (Instruction &I : instructions(Twin)) {
		auto *Call = dyn_cast<CallBase>(&I);
		if (!Call)
			continue;
		auto *Callee = dyn_cast<Function>(Call->getCalledOperand());
		if (!Callee || Call->getFunctionType() != Callee->getFunctionType() ||
		    !mayCallRemoteTwin(*Call, *Callee, TLI))
			continue;
		std::string Name = (Callee->getName() + TwinSuffix).str();
		Function *Remote = M.getFunction(Name);
		if (!Remote) {
			Remote = Function::Create(Callee->getFunctionType(),
						  GlobalValue::ExternalLinkage,
						  Callee->getAddressSpace(), Name, &M);
			Remote->copyAttributesFrom(Callee);
			Remote->setLinkage(GlobalValue::ExternalLinkage);
			Remote->setDSOLocal(Callee->isDSOLocal());
		}
		if (Remote->getFunctionType() != Call->getFunctionType())
			continue;
		Call->setCalledOperand(Remote);
		Changed++;
	}
	return Changed;
}

// At the pipeline's start: the twins, and their calls redirected.
struct EntryTwinPass : PassInfoMixin<EntryTwinPass> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &)
	{
		SmallPtrSet<const Function *, 8> Named = namedByTables(M);
		MapVector<Function *, Function *> TwinOf;
		SmallVector<GlobalValue *, 64> Keep;
		StringMap<unsigned> NotTwinned;
		unsigned Candidates = 0;

		for (Function &F : M) {
			// An available_externally body is twinned too, so that the
			// twins can inline it: a twin inlines only noprofile code.
			if (F.isDeclaration() || F.hasFnAttribute(Attribute::NoProfile) ||
			    F.hasFnAttribute(Attribute::SkipProfile))
				continue;
			Candidates++;
			if (const char *Why = cannotTwin(F, Named))
				NotTwinned[Why]++;
			else
				TwinOf[&F] = nullptr;
		}
		for (auto &Entry : TwinOf)
			Entry.second = makeTwin(*Entry.first);
		for (auto &Entry : TwinOf) {
			for (Instruction &I : instructions(*Entry.second))
				if (auto *Call = dyn_cast<CallBase>(&I))
					if (auto *Callee = dyn_cast<Function>(Call->getCalledOperand()))
						if (Function *Twin = TwinOf.lookup(Callee))
							// A weak definition may not be
							// the one linked (mm's weak
							// mem_init(), x86's strong one);
							// a call through a cast keeps its
							// own type.
							if (!Callee->isInterposable() &&
							    Call->getFunctionType() ==
								    Twin->getFunctionType())
								Call->setCalledOperand(Twin);
		}
		// Once every twin calls twins: a call left to F is from code
		// without one.
		for (auto &Entry : TwinOf) {
			if (twinNeededAtEnd(*Entry.first, TwinOf)) {
				Entry.second->addFnAttr(DispatchableAttribute);
				Keep.push_back(Entry.second);
			}
		}
		if (!Keep.empty())
			appendToCompilerUsed(M, Keep);
		if (Stats) {
			errs() << "kpgo-entry-sampling: " << M.getSourceFileName() << ": "
			       << TwinOf.size() << " of " << Candidates << " functions twinned";
			SmallVector<StringRef, 8> Reasons;
			for (auto &Entry : NotTwinned)
				Reasons.push_back(Entry.getKey());
			sort(Reasons);
			for (StringRef Reason : Reasons)
				errs() << "; " << NotTwinned[Reason] << " " << Reason;
			errs() << "\n";
		}
		return TwinOf.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
	}
};

// At the optimizer's end: entry tests, guarded updates, and the twins
// that nothing needs deleted.
struct EntryTestPass : PassInfoMixin<EntryTestPass> {
	PreservedAnalyses run(Module &M, ModuleAnalysisManager &MAM)
	{
		MapVector<Function *, Function *> TwinOf;
		SetVector<Function *> Twins;
		SetVector<Function *> Instrumented;
		enum class Entry { Test, Guard };
		MapVector<Function *, Entry> How;
		unsigned Tests = 0, Guards = 0, Folded = 0, Kept = 0, Exported = 0, Remote = 0;
		GlobalVariable *Flag = nullptr;
		bool Changed;

		// Once per module: under LTO the optimizer's end comes again, and
		// would take a dispatcher for a function not instrumented.
		if (M.getModuleFlag(DoneFlag))
			return PreservedAnalyses::all();
		M.addModuleFlag(Module::Warning, DoneFlag, 1);
		for (Function &F : M)
			if (F.hasFnAttribute(TwinOfAttribute))
				Twins.insert(&F);
		removeFromUsedLists(M, [&](Constant *C) {
			auto *F = dyn_cast<Function>(C->stripPointerCasts());
			return F && Twins.contains(F);
		});
		for (Function *Twin : Twins)
			if (Function *F = M.getFunction(
				    Twin->getFnAttribute(TwinOfAttribute).getValueAsString()))
				if (!F->isDeclaration() && F->getFunctionType() == Twin->getFunctionType())
					TwinOf[F] = Twin;
		for (Function &F : M)
			if (!F.isDeclaration() && !F.hasAvailableExternallyLinkage() &&
			    !profileUpdates(F).empty())
				Instrumented.insert(&F);
		// Not instrumented (a module built without -fprofile-generate):
		// the twin is F again.
		for (auto &Pair : TwinOf) {
			if (Instrumented.contains(Pair.first) || Instrumented.contains(Pair.second))
				continue;
			Pair.second->replaceAllUsesWith(Pair.first);
			Twins.remove(Pair.second);
			Pair.second->eraseFromParent();
			Pair.second = nullptr;
			Folded++;
		}

		// Which instrumented functions can run outside a burst: those
		// visible outside the module or used other than by a call, and
		// those called by code that does (a twin, a function not
		// instrumented, a guarded one).  The rest run only in bursts,
		// entered from a function that passed its test.
		auto RunsOutsideBursts = [&](Function *F) {
			auto It = How.find(F);
			return !Instrumented.contains(F) || Twins.contains(F) ||
			       (It != How.end() && It->second == Entry::Guard);
		};
		auto EnteredOutsideBursts = [&](Function *F) {
			if (!F->hasLocalLinkage() || hasNonCallUse(*F))
				return true;
			for (User *U : F->users())
				if (RunsOutsideBursts(cast<CallBase>(U)->getFunction()))
					return true;
			return false;
		};
		do {
			Changed = false;
			for (Function *F : Instrumented) {
				if (How.count(F) || !EnteredOutsideBursts(F))
					continue;
				// The optimizer may have found that F does not return
				// (cannotTwin() saw only what the source said).
				// Only a twin kept from the start takes any arguments
				// (no pass specialized it to its callers'); an
				// internal F called from a function without a twin
				// is guarded instead.
				Function *Twin = TwinOf.lookup(F);
				How[F] = Twin && Twin->hasFnAttribute(DispatchableAttribute) &&
							 !F->doesNotReturn() ?
						 Entry::Test :
						 Entry::Guard;
				Changed = true;
			}
		} while (Changed);

		if (!How.empty()) {
			Flag = M.getGlobalVariable(FlagName, true);
			if (!Flag)
				Flag = new GlobalVariable(
					M, Type::getInt8Ty(M.getContext()), false,
					GlobalValue::ExternalLinkage, nullptr, FlagName, nullptr,
					FlagTls ? GlobalValue::GeneralDynamicTLSModel :
						  GlobalValue::NotThreadLocal);
			// The kernel's per-CPU variable is in vmlinux: %gs:symbol.
			if (!FlagTls)
				Flag->setDSOLocal(true);
		}
		// What runs in bursts only goes apart, as the counted bodies do
		// (addEntryTest()).
		for (Function *F : Instrumented)
			if (!How.count(F) && !F->hasSection())
				F->setSection(".text.unlikely");
		for (auto &Decision : How) {
			if (Decision.second == Entry::Test) {
				addEntryTest(*Decision.first, *TwinOf.lookup(Decision.first), *Flag);
				if (ExternTwins && exportTwin(*Decision.first, *TwinOf.lookup(Decision.first)))
					Exported++;
				Tests++;
			} else {
				guardUpdates(*Decision.first, *Flag);
				Guards++;
			}
		}
		// Twins that nothing calls any more: F was inlined everywhere, or
		// runs only in bursts.
		do {
			Changed = false;
			for (Function *Twin : SmallVector<Function *, 64>(Twins.begin(), Twins.end())) {
				Twin->removeDeadConstantUsers();
				if (!Twin->use_empty() || !Twin->hasLocalLinkage())
					continue;
				Twins.remove(Twin);
				Twin->eraseFromParent();
				Changed = true;
			}
		} while (Changed);
		Kept = Twins.size();
		if (ExternTwins) {
			FunctionAnalysisManager &FAM =
				MAM.getResult<FunctionAnalysisManagerModuleProxy>(M).getManager();
			for (Function *Twin : Twins)
				Remote += callRemoteTwins(*Twin, FAM.getResult<TargetLibraryAnalysis>(*Twin));
		}
		if (Stats && (!TwinOf.empty() || !Instrumented.empty())) {
			errs() << "kpgo-entry-sampling: " << M.getSourceFileName() << ": at the end "
			       << Tests << " entry tests, " << Guards << " guarded, " << Kept
			       << " twins kept, " << Folded << " folded back";
			if (ExternTwins)
				errs() << "; " << Exported << " twins external, " << Remote
				       << " calls to other objects' twins";
			errs() << "\n";
		}
		return PreservedAnalyses::none();
	}
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo()
{
	return { LLVM_PLUGIN_API_VERSION, "kpgo-entry-sampling", "1",
		 [](PassBuilder &PB) {
			 PB.registerPipelineStartEPCallback(
				 [](ModulePassManager &MPM, OptimizationLevel) {
					 MPM.addPass(EntryTwinPass());
				 });
			 PB.registerOptimizerLastEPCallback(
				 [](ModulePassManager &MPM, OptimizationLevel, ThinOrFullLTOPhase) {
					 MPM.addPass(EntryTestPass());
				 });
		 } };
}
