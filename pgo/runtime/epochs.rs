// SPDX-License-Identifier: GPL-2.0

//! Epochs of counts, for a kernel built with counter relocation
//! (`profile::epochs` does the accounting, per object).
//!
//! - `pgo/epoch` (0200): `1` switches every object (vmlinux and each live
//!   module) to its other set of counters, waits (`wait_for_old_bias`),
//!   and closes the set each left; anything else is `EINVAL`, a switch
//!   while one is under way `EBUSY`.
//! - `pgo/epochs/<object>.profraw` (0400): the object's last finished
//!   epoch, a raw profile without value data (the value profiles, which
//!   have no sets, stay in `<object>.profraw`); `ENODATA` before the first
//!   switch, `ENODEV` for an unloaded module.
//!
//! Every live object's bias points at the set [`PARITY`] names, but while
//! a switch moves them. A module joins at its COMING notification, before
//! any of its code runs: it points its bias at the set [`PARITY`] names
//! after it is published (so the switch may find it too), and again if a
//! switch changed [`PARITY`] meanwhile; either way it ends at the set of
//! the last switch. A module that a switch did not prepare is not closed
//! by it: its counts go to the next epoch.

use core::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};

use kernel::prelude::*;

use super::kernel_api::debugfs::{Command, Snapshot};

use super::kernel_api::{fatal_signal_pending, reschedule_point, sleep_a_while, wait_for_old_bias};
use super::registry::{self, Entry};
use crate::profile::epochs::WORDS_PER_COUNTER;
use crate::profile::sections::ProfiledObject;
use crate::profile::sink::{Measure, Paced, Sink, SliceSink};
use crate::profile::writer::write_finished_epoch;

/// The set every bias points at, 0 or 1, from the moment a switch begins
/// to move them.
static PARITY: AtomicUsize = AtomicUsize::new(0);
/// Whether a switch is under way: one at a time.
static SWITCHING: AtomicBool = AtomicBool::new(false);
/// Switches completed since boot: the last finished epoch.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// The accounting words of `object`, attached to it; empty if the object
/// has no bias or cannot take part. The caller keeps the buffer (never
/// resized, so never moved) as long as the object.
pub(crate) fn attach_words(object: &ProfiledObject) -> Result<KVVec<AtomicU64>> {
    // vmlinux's are in its region already, if it has one (`persist`).
    if object.sections().counter_bias.is_empty() || object.has_epochs() {
        return Ok(KVVec::new());
    }
    let count = WORDS_PER_COUNTER * (object.sections().counters.len() / 8);
    let mut words = KVVec::with_capacity(count, GFP_KERNEL)?;
    for _ in 0..count {
        words.push(AtomicU64::new(0), GFP_KERNEL)?;
    }
    // SAFETY: `WORDS_PER_COUNTER` zeroed words per 8-byte counter, which
    // the caller keeps as long as the object, and nothing else uses.
    if unsafe { object.attach_epoch_words(words.as_mut_ptr()) } {
        Ok(words)
    } else {
        Ok(KVVec::new())
    }
}

/// Points the bias of `object`, a module just published, at the set of
/// the switches, before any of its code runs (see the module's
/// documentation).
pub(crate) fn join(object: &ProfiledObject) {
    loop {
        let parity = PARITY.load(Ordering::SeqCst);
        object.point_bias_at(parity);
        // Pairs with the switch's: it either finds this object after its
        // store of `PARITY`, or this sees its store here.
        fence(Ordering::SeqCst);
        if PARITY.load(Ordering::SeqCst) == parity {
            return;
        }
    }
}

/// Switches every live object to its other set, and closes the set it
/// left; `EBUSY` while another switch is under way.
fn switch() -> Result {
    if SWITCHING
        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Err(EBUSY);
    }
    let epoch = EPOCH.load(Ordering::Relaxed) + 1;
    let left = PARITY.load(Ordering::Relaxed);
    let next = 1 - left;
    registry::for_each_live_object(|object| object.prepare_epoch(epoch, next, reschedule_point));
    PARITY.store(next, Ordering::SeqCst);
    // Pairs with `join`'s.
    fence(Ordering::SeqCst);
    registry::for_each_live_object(|object| object.point_bias_at(next));
    wait_for_old_bias();
    registry::for_each_live_object(|object| {
        object.close_epoch(epoch, left, reschedule_point);
    });
    EPOCH.store(epoch, Ordering::Release);
    SWITCHING.store(false, Ordering::Release);
    Ok(())
}

/// The last finished epoch, for `pgo/stats`.
pub(crate) fn finished() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// `epoch`.
pub(crate) struct EpochCommand;

impl Command for EpochCommand {
    fn command(command: &[u8]) -> Result {
        match command {
            b"1" => switch(),
            _ => Err(EINVAL),
        }
    }
}

/// `epochs/<name>.profraw`; its key is its registry entry's address.
pub(crate) struct EpochFile;

impl Snapshot for EpochFile {
    fn snapshot(key: usize) -> Result<KVVec<u8>> {
        // SAFETY: `Registry::add` creates these files, with that key.
        epoch_profile(unsafe { registry::entry_of_file(key) })
    }
}

/// The profile of the last finished epoch of `entry`'s live object,
/// written when no switch changes it (a seqlock's read side).
fn epoch_profile(entry: &Entry) -> Result<KVVec<u8>> {
    loop {
        let measured = {
            let section = entry.read_section();
            let object = entry.live(&section).ok_or(ENODEV)?;
            if !object.has_epochs() {
                return Err(Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32)));
            }
            match object.stable_finished_epoch() {
                Some(epoch) => {
                    let mut measure = Paced::new(Measure::new(), reschedule_point);
                    write_finished_epoch(object, &mut measure).map_err(|_| EINVAL)?;
                    Some((measure.position(), epoch))
                }
                None if object.epoch_figures().finished_epoch == 0
                    && !SWITCHING.load(Ordering::Acquire) =>
                {
                    return Err(Error::from_errno(-(kernel::bindings::ENODATA as i32)))
                }
                None => None,
            }
        };
        if let Some((len, epoch)) = measured {
            let mut bytes = KVVec::from_elem(0u8, len, GFP_KERNEL)?;
            let section = entry.read_section();
            let object = entry.live(&section).ok_or(ENODEV)?;
            let mut sink = Paced::new(SliceSink::new(&mut bytes), reschedule_point);
            let written = write_finished_epoch(object, &mut sink).is_ok();
            if written && sink.position() == len && object.finished_epoch_unchanged(epoch) {
                return Ok(bytes);
            }
        }
        // A switch under way, or another module of that name since.
        if fatal_signal_pending() {
            return Err(EINTR);
        }
        sleep_a_while();
    }
}
