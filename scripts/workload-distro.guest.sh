# SPDX-License-Identifier: GPL-2.0
# The profiling workload of a distribution's base (make, make
# check-distro: BASE=debian-cloud), in the guest: every module of the
# base's list loaded with the real modprobe (kmod, modules.dep of make
# modules_install), then what a cloud VM, a server and a container host do
# with them: file systems on image files, dm-crypt, overlay, zram, network
# namespaces on a bridge with nftables and conntrack, VXLAN and WireGuard
# tunnels; then every profile file, timed.  The same script runs on the
# optimized and baseline kernels, which have no profiles to read.
#
# A list entry that is no module of this kernel, and a module that fails
# to load, get one line each on the console and in the results; the rest
# goes on (so too after bad input: /kpgo/bad, below).  A workload step
# whose tool fails says so and the run goes on too (results:
# workload-failed): check-distro judges the lists.
. /kpgo/guest-lib.sh
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
pgo=/sys/kernel/debug/pgo
r=$KPGO_RESULTS
ver=$(uname -r)
cat /proc/meminfo >$r/meminfo-boot
# kmod is one program; it acts as modprobe, modinfo, lsmod by its name.
mkdir -p /usr/sbin
for tool in modprobe modinfo lsmod rmmod depmod insmod; do
	ln -sf /usr/bin/kmod /usr/sbin/$tool
done
echo /usr/sbin/modprobe >/proc/sys/kernel/modprobe
mkdir -p /run/netns /var/lib /etc
ln -sf /run /var/run
# busybox sh runs its own applet of a name before any program on PATH:
# the real ones, by path, where it has one.
modprobe() { /usr/sbin/modprobe "$@"; }
modinfo() { /usr/sbin/modinfo "$@"; }
ip() { /usr/sbin/ip "$@"; }
losetup() { /usr/sbin/losetup "$@"; }
[ ! -d $pgo ] || echo 1 >$pgo/reset
step reset

# failed WHAT: records a workload step that did not complete.
failed() {
	echo "workload: $1: failed"
	echo "$1" >>$r/workload-failed
}

# load_list FILE PREFIX: modprobe of every module FILE lists (one per line,
# "#" comments), each one's outcome in $r/PREFIX-ok, -missing, -failed.
load_list() {
	local module error
	: >$r/$2-ok
	: >$r/$2-missing
	: >$r/$2-failed
	while read -r module _; do
		case $module in '' | '#'*) continue ;; esac
		if ! modinfo -F filename "$module" >/dev/null 2>&1; then
			echo "module list: $module: no such module in /lib/modules/$ver"
			echo "$module" >>$r/$2-missing
		elif error=$(modprobe "$module" 2>&1 >/dev/null); then
			echo "$module" >>$r/$2-ok
		else
			echo "module list: $module: modprobe failed: ${error:-no message}"
			echo "$module $error" >>$r/modprobe-errors
			echo "$module" >>$r/$2-failed
		fi
	done <"$1"
}

# Bad input first (make check-distro gives it in /kpgo/bad: modules that
# must be refused or fail, a list of entries that are no modules), so
# that the whole run after it shows it changed nothing else: one line each.
if [ -d /kpgo/bad ]; then
	: >$r/bad-loaded
	: >$r/bad-refused
	for ko in /kpgo/bad/*.ko; do
		if error=$(/usr/sbin/insmod "$ko" 2>&1); then
			echo "bad input: ${ko##*/}: loaded"
			echo "${ko##*/}" >>$r/bad-loaded
		else
			echo "bad input: ${ko##*/}: insmod failed: $error"
			echo "${ko##*/} $error" >>$r/bad-refused
		fi
	done
	load_list /kpgo/bad/modules.list bad-list
	step bad-input
fi

load_list /kpgo/modules.list modules
cat /proc/modules >$r/modules-loaded
cat /proc/meminfo >$r/meminfo-modules
step modules-loaded

# File systems on image files on loop devices (tmpfs holds the images).
mkdir -p /img /mnt/fs
mount -t tmpfs -o size=1200M tmpfs /img
fs_work() { # DEV TYPE [MKFS...]: make, mount, write, read back, unmount
	local dev=$1 type=$2
	shift 2
	"$@" "$dev" >/dev/null 2>&1 || { failed "mkfs $type"; return; }
	mount -t "$type" "$dev" /mnt/fs || { failed "mount $type"; return; }
	cp -a /lib/modules /mnt/fs/ && sync &&
		find /mnt/fs -type f -exec cat {} + | md5sum >/dev/null &&
		tar -cf - -C /mnt/fs modules | tar -xf - -C /tmp && rm -rf /tmp/modules /mnt/fs/modules ||
		failed "work on $type"
	umount /mnt/fs
}
for spec in ext4:mkfs.ext4:-q xfs:mkfs.xfs:-q btrfs:mkfs.btrfs:-q vfat:mkdosfs: exfat:mkfs.exfat:; do
	type=${spec%%:*} rest=${spec#*:}
	mkfs=${rest%%:*} opt=${rest#*:}
	truncate -s 320M /img/$type.img
	dev=$(losetup -f --show /img/$type.img) || { failed "losetup $type"; continue; }
	# shellcheck disable=SC2086 # opt: no option or one
	fs_work "$dev" "$type" "$mkfs" $opt
	losetup -d "$dev"
	rm -f /img/$type.img
done
step filesystems

# dm-crypt (plain, aes-xts) on a loop device, ext4 on top.
truncate -s 128M /img/crypt.img
dev=$(losetup -f --show /img/crypt.img)
head -c 64 /dev/urandom >/tmp/crypt.key
if cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
	--key-file /tmp/crypt.key "$dev" kpgo_crypt; then
	fs_work /dev/mapper/kpgo_crypt ext4 mkfs.ext4 -q
	cryptsetup close kpgo_crypt
else
	failed "cryptsetup open"
fi
losetup -d "$dev"
rm -f /img/crypt.img
step dm-crypt

# overlay over tmpfs, as a container's root file system.
mkdir -p /ov/lower/etc /ov/upper /ov/work /ov/merged
cp -a /kpgo/. /ov/lower/etc/
if mount -t overlay overlay -o lowerdir=/ov/lower,upperdir=/ov/upper,workdir=/ov/work /ov/merged; then
	echo changed >>/ov/merged/etc/guest-lib.sh
	rm -f /ov/merged/etc/modules.list
	cp -a /lib/modules /ov/merged/ && find /ov/merged -type f | wc -l >/dev/null
	umount /ov/merged
else
	failed "mount overlay"
fi
step overlay

# zram as a block device (reading hot_add makes one).
if [ -e /sys/block/zram0 ] || cat /sys/class/zram-control/hot_add >/dev/null 2>&1; then
	echo 96M >/sys/block/zram0/disksize && fs_work /dev/zram0 ext4 mkfs.ext4 -q ||
		failed zram
	echo 1 >/sys/block/zram0/reset
else
	failed "zram: no device"
fi
step zram

# traffic FROM TO ADDR PORT BLOCKS: from namespace FROM to TO's ADDR, 20
# pings, then BLOCKS of 64 KiB over TCP to PORT (busybox nc), all of
# which must arrive.  The client connects once the listener listens (in
# TO's /proc/net/tcp or tcp6: the port in hex, state 0A), and the
# listener is stopped once every byte arrived (or after 30 s).  Its stdin
# is a FIFO held open meanwhile: busybox nc at EOF on its stdin closes
# the connection, which would end the transfer after a few KiB.
traffic() {
	local listener status=0 port i
	ip netns exec "$1" ping -c 20 -i 0.05 "$3" >/dev/null || return 1
	rm -f /tmp/hold /tmp/received
	mkfifo /tmp/hold
	ip netns exec "$2" nc -l -p "$4" </tmp/hold >/tmp/received &
	listener=$!
	exec 3>/tmp/hold
	port=$(printf ':%04X [0-9A-F]+:0000 0A' "$4")
	i=0
	until ip netns exec "$2" cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -qE "$port"; do
		i=$((i + 1))
		[ $i -lt 100 ] || { status=1; break; }
		sleep 0.1
	done
	[ $status -ne 0 ] ||
		dd if=/dev/zero bs=64k count="$5" 2>/dev/null | ip netns exec "$1" nc -w 2 "$3" "$4" || status=1
	i=0
	while [ "$(wc -c </tmp/received)" -lt $(($5 * 65536)) ] && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	exec 3>&-
	kill "$listener" 2>/dev/null
	wait "$listener" 2>/dev/null
	[ "$(wc -c </tmp/received)" -eq $(($5 * 65536)) ] || status=1
	return $status
}

# Networks as a container host has them: namespaces a and b on the bridge
# br0 over veth pairs, the bridge's traffic filtered by nftables
# (br_netfilter) with conntrack; their way out routed by the host and
# masqueraded (NAT) to namespace o, the outside, over a veth pair of its
# own (masquerading traffic within the bridge would break replies); then
# VXLAN and WireGuard tunnels between a and b.
net() {
	ip link add br0 type bridge &&
		ip addr add 10.0.0.254/24 dev br0 && ip link set br0 up || return 1
	for ns in a b o; do
		ip netns add $ns &&
			ip link add ${ns}0 type veth peer name ${ns}1 &&
			ip link set ${ns}1 netns $ns && ip link set ${ns}0 up &&
			ip -n $ns link set lo up && ip -n $ns link set ${ns}1 up || return 1
	done
	ip link set a0 master br0 && ip link set b0 master br0 &&
		ip -n a addr add 10.0.0.1/24 dev a1 && ip -n b addr add 10.0.0.2/24 dev b1 &&
		ip -n a route add default via 10.0.0.254 && ip -n b route add default via 10.0.0.254 &&
		ip addr add 10.9.0.254/24 dev o0 && ip -n o addr add 10.9.0.1/24 dev o1 || return 1
	echo 1 >/proc/sys/net/ipv4/ip_forward
	echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
	nft -f - <<'NFT' || return 1
table inet kpgo {
	set allowed { type inet_service; elements = { 5000, 5001, 5002, 5003 } }
	chain forward {
		type filter hook forward priority 0; policy drop;
		ct state established,related counter accept
		tcp dport @allowed ct state new counter accept
		ip protocol icmp limit rate 1000/second counter accept
		udp dport { 4789, 51820 } counter accept
	}
	chain input {
		type filter hook input priority 0; policy accept;
		ct state invalid counter drop
		counter
	}
}
table ip kpgo_nat {
	chain postrouting {
		type nat hook postrouting priority 100;
		ip saddr 10.0.0.0/24 oifname "o0" counter masquerade
	}
}
NFT
	# 16 MiB across the bridge, 4 MiB out through NAT (o has no route
	# back to 10.0.0.0/24: only masqueraded traffic gets answers).
	traffic a b 10.0.0.2 5000 256 && traffic a o 10.9.0.1 5003 64
	local status=$?
	nft list ruleset >$r/nft-ruleset
	return $status
}
net || failed "bridge and nftables"
step net

vxlan() {
	for ns in a b; do
		peer=10.0.0.2
		[ $ns = a ] || peer=10.0.0.1
		ip -n $ns link add vx0 type vxlan id 42 remote $peer dstport 4789 dev ${ns}1 &&
			ip -n $ns link set vx0 up || return 1
	done
	ip -n a addr add 10.2.0.1/24 dev vx0 && ip -n b addr add 10.2.0.2/24 dev vx0 &&
		traffic a b 10.2.0.2 5002 64
}
vxlan || failed vxlan
step vxlan

wireguard() {
	for ns in a b; do
		(umask 077 && wg genkey >/tmp/wg-$ns.key) && wg pubkey </tmp/wg-$ns.key >/tmp/wg-$ns.pub || return 1
	done
	for ns in a b; do
		if [ $ns = a ]; then peer=b me=1 them=2; else peer=a me=2 them=1; fi
		ip -n $ns link add wg0 type wireguard &&
			ip netns exec $ns wg set wg0 private-key /tmp/wg-$ns.key listen-port 51820 \
				peer "$(cat /tmp/wg-$peer.pub)" allowed-ips 10.1.0.$them/32 \
				endpoint 10.0.0.$them:51820 &&
			ip -n $ns addr add 10.1.0.$me/24 dev wg0 && ip -n $ns link set wg0 up || return 1
	done
	traffic a b 10.1.0.2 5001 64 || return 1
	ip netns exec a wg show >$r/wg-show
}
wireguard || failed wireguard
step wireguard

# Devices a container host makes and removes: tun, macvlan, ipvlan (on a
# dummy of its own: one lower device takes macvlan or ipvlan, not both),
# VLAN, bond, dummy.
{
	ip tuntap add mode tun kpgo_tun && ip link del kpgo_tun &&
		ip link add kpgo_dummy type dummy && ip link set kpgo_dummy up &&
		ip link add link kpgo_dummy name kpgo_mv type macvlan mode bridge &&
		ip link add kpgo_dummy2 type dummy &&
		ip link add link kpgo_dummy2 name kpgo_iv type ipvlan mode l2 &&
		ip link add link kpgo_dummy name kpgo_vlan type vlan id 7 &&
		ip link add kpgo_bond type bond &&
		ip link del kpgo_mv && ip link del kpgo_iv && ip link del kpgo_vlan &&
		ip link del kpgo_bond && ip link del kpgo_dummy && ip link del kpgo_dummy2
} || failed "virtual devices"
step devices

# Every profile, each file read whole, timed together (centiseconds of
# /proc/uptime: the guest has no finer clock in busybox).
if [ -d $pgo ]; then
	start=$(cut -d' ' -f1 /proc/uptime)
	for f in $pgo/*.profraw; do
		cat "$f" >"$r/$(basename "$f")"
	done
	end=$(cut -d' ' -f1 /proc/uptime)
	echo "start=$start end=$end" >$r/profiles-read-time
	# Where each module was at the read (scripts/ic-targets).
	cat /proc/modules >$r/modules-at-read
	cat $pgo/stats >$r/stats
fi
step profiles-read
