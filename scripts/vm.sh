#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a kernel under QEMU on the host's own root filesystem (virtio-9p,
# read-only, under a tmpfs overlay) and run one command in it, as
# virtme-ng does. The guest sees the host's tools and this tree at the same
# path (the tree is shared on its own too, so that it may be anywhere,
# /tmp included; so is each --share DIR, writable under an overlay as the
# root is). Prints the guest's console; exits with the command's status,
# or 1 when the guest's dmesg shows a kernel problem (see vm-guest.sh).
#
# usage: vm.sh --kernel VMLINUZ --modules DIR [--smp N] [--mem MB]
#              [--timeout S] [--boot-timeout S] [--system-map FILE]
#              [--e1000e N] [--virtio-net] [--append ARGS] [--share DIR]...
#              [--kvm] -- COMMAND [ARGS...]
#
# --e1000e N gives the guest N emulated Intel 82574L NICs on one QEMU hub
# (frames from one reach all the others, and nothing else: no host
# networking); --virtio-net two virtio-net NICs on a hub of their own,
# whose driver has queue statistics from 6.10 on (a NIC alone on a hub
# cannot send: its TX queue stalls); --append adds to the kernel's
# command line.

set -euo pipefail

usage() {
	sed -n 's/^# usage: //p; s/^#              /            /p' "$0" >&2
	exit 2
}

kernel= modules= smp=2 mem=2048 timeout=900 boot_timeout=480 accel=tcg
sysmap= e1000e=0 virtio_net= append=
shares=()
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--modules) modules=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--boot-timeout) boot_timeout=$2; shift 2 ;;
	--system-map) sysmap=$2; shift 2 ;;
	--e1000e) e1000e=$2; shift 2 ;;
	--virtio-net) virtio_net=2; shift ;;
	--append) append=$2; shift 2 ;;
	--share) shares+=("$(cd "$2" && pwd)"); shift 2 ;;
	--kvm) accel=kvm; shift ;;
	--) shift; break ;;
	*) usage ;;
	esac
done
[ -n "$kernel" ] && [ -n "$modules" ] && [ $# -gt 0 ] || usage
# Debian's next to its vmlinuz, a build tree's at its top
if [ -z "$sysmap" ]; then
	for f in "$(dirname "$kernel")/System.map-${kernel##*/vmlinuz-}" \
		 "$(dirname "$kernel")/../../../System.map"; do
		[ -f "$f" ] && { sysmap=$f; break; }
	done
fi

top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/kpm-vm.XXXXXX)
trap 'rm -rf "$work"' EXIT

# initramfs: static busybox, the modules that mount the host's root, /init
mkdir -p "$work/initrd/bin" "$work/initrd/mods" "$work/initrd/proc" \
	 "$work/initrd/sys" "$work/initrd/dev"
cp /bin/busybox "$work/initrd/bin/busybox"
for m in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p \
	 fs/overlayfs/overlay; do
	ko=$(ls "$modules/kernel/$m.ko"* 2>/dev/null | head -n1 || true)
	[ -n "$ko" ] || continue	# built in
	case "$ko" in
	*.xz) xz -dc "$ko" > "$work/initrd/mods/$(basename "$m").ko" ;;
	*.zst) zstd -qdc "$ko" > "$work/initrd/mods/$(basename "$m").ko" ;;
	*) cp "$ko" "$work/initrd/mods/" ;;
	esac
done

echo "$top" > "$work/initrd/tree"
for dir in ${shares[@]+"${shares[@]}"}; do
	echo "$dir"
done > "$work/initrd/shares"
{
	echo "cd $(printf '%q' "$PWD")"
	printf '%q ' "$top/scripts/vm-guest.sh" "$@"
	echo
} > "$work/initrd/cmd"

cat > "$work/initrd/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
# SysRq w and l from vm-where.py when the guest does not finish
echo 1 > /proc/sys/kernel/sysrq
for m in netfs 9pnet 9pnet_virtio 9p overlay; do
	[ -f /mods/$m.ko ] && insmod /mods/$m.ko
done
mkdir -p /lower /rw /root
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /lower
mount -t tmpfs -o size=75% tmpfs /rw
mkdir -p /rw/upper /rw/work
mount -t overlay overlay \
	-o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /root
mount -t proc proc /root/proc
mount -t sysfs sys /root/sys
mount -t devtmpfs dev /root/dev
mkdir -p /root/dev/pts /root/dev/shm
mount -t devpts devpts /root/dev/pts
mount -t tmpfs tmpfs /root/dev/shm
# the links udev makes, which the kernel's kselftest runner writes to
ln -s /proc/self/fd /root/dev/fd
ln -s /proc/self/fd/0 /root/dev/stdin
ln -s /proc/self/fd/1 /root/dev/stdout
ln -s /proc/self/fd/2 /root/dev/stderr
mount -t tmpfs tmpfs /root/tmp
mount -t tmpfs tmpfs /root/run
mount -t debugfs debugfs /root/sys/kernel/debug
mkdir -p /root/run/netns
# this tree at its own path, wherever it is (/tmp is the guest's own)
tree=$(cat /tree)
mkdir -p "/root$tree"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose kpmtree "/root$tree"
# each --share DIR there too, writable as the root is (a tmpfs overlay)
i=0
while read -r dir; do
	mkdir -p "/share$i" "/rw/share$i/upper" "/rw/share$i/work" "/root$dir"
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose "kpmshare$i" "/share$i"
	mount -t overlay overlay \
		-o "lowerdir=/share$i,upperdir=/rw/share$i/upper,workdir=/rw/share$i/work" "/root$dir"
	i=$((i + 1))
done < /shares
cp /cmd /root/tmp/kpm-vm-cmd
cat > /root/tmp/kpm-vm-init <<'RUN'
/usr/bin/env -i HOME=/root TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	/bin/bash /tmp/kpm-vm-cmd
echo "KPM-VM-EXIT: $?"
echo o > /proc/sysrq-trigger
sleep 60
RUN
echo "KPM-VM: guest up at $(cut -d" " -f1 /proc/uptime) s of uptime"
# a real root, not a chroot: user namespaces refuse chrooted callers, and
# the kernel's module autoloading finds the host's /sbin/modprobe
exec switch_root /root /bin/bash /tmp/kpm-vm-init
INIT
chmod +x "$work/initrd/init"
(cd "$work/initrd" && find . | cpio -o -H newc --quiet | gzip -1) > "$work/initrd.gz"

# TCG's "max" CPU has 5-level paging; a 7.3 KASAN kernel then took an
# early-boot wild-memory-access report in handle_edge_irq, in about one
# boot of ten. Real NICs' hosts run 4-level paging.
cpu=max,la57=off
# q35: the i440fx machine's ACPI routes PCI interrupts with a _PRT method
# that loops over its table in AML; a KASAN kernel under TCG ran into the
# interpreter's 30 s loop timeout on it at every PCI bus scan (about two
# minutes a boot with two NICs). q35's _PRT is a plain package.
# Each CPU that comes up calibrates its delay loop unless lpj= gives it
# (TCG offers no invariant TSC, so the kernel does not reuse the boot CPU's
# value), and the boot CPU waits for each in turn: 63 of them took 84 s of
# a 64-vCPU guest's boot, 3 s with lpj=. Given where it matters (more than
# 8 vCPUs), as the boot CPU computes it: the TSC's rate (the host's, under
# TCG; "cpu MHz" is that rate unless the host scales its clock) over the
# kernel's HZ, from the config beside the image (Debian's /boot/config-*,
# or a build tree's .config). Without one, the guest calibrates.
lpj=
kconfig=/boot/config-${kernel#/boot/vmlinuz-}
[ -f "$kconfig" ] || kconfig=$(dirname "$kernel")/../../../.config
if [ "$smp" -gt 8 ] && [ -f "$kconfig" ]; then
	hz=$(sed -n 's/^CONFIG_HZ=\([0-9]*\)$/\1/p' "$kconfig")
	lpj=$(awk -v hz="${hz:-0}" '/^cpu MHz/ && hz > 0 {
		printf "%d", $4 * 1000000 / hz; exit }' /proc/cpuinfo)
fi
qemu=(qemu-system-x86_64 -machine q35 -accel "$accel" -cpu "$cpu" -smp "$smp" -m "$mem"
      -nographic -no-reboot -nic none
      -kernel "$kernel" -initrd "$work/initrd.gz"
      -append "console=ttyS0 rdinit=/init panic=-1 loglevel=4 quiet nokaslr${lpj:+ lpj=$lpj}${append:+ $append}"
      -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
      -virtfs "local,path=$top,mount_tag=kpmtree,security_model=none,readonly=on,multidevs=remap")
for ((i = 0; i < ${#shares[@]}; i++)); do
	qemu+=(-virtfs "local,path=${shares[i]},mount_tag=kpmshare$i,security_model=none,readonly=on,multidevs=remap")
done
for ((i = 0; i < e1000e; i++)); do
	qemu+=(-netdev "hubport,id=hub$i,hubid=0"
	       -device "e1000e,netdev=hub$i,mac=52:54:00:00:00:$((10 + i)),romfile=")
done
for ((i = 0; i < ${virtio_net:-0}; i++)); do
	qemu+=(-netdev "hubport,id=vnet$i,hubid=1"
	       -device "virtio-net-pci,netdev=vnet$i,mac=52:54:00:00:01:$((10 + i)),romfile=")
done

# A guest that has not finished in time says where it is (vm-where.py)
# before it is stopped. One that never reached /init, before anything of
# ours ran, is booted again: a hang in early boot was seen with TCG on
# the debug kernel, and a 6.12 guest of one CI run ended within 3 s.
run_guest() {
	local start=$SECONDS up=0 pid t st
	: > "$work/console"
	# the console through a FIFO, so that sed and tee are this script's
	# children, waited for (and counted in its CPU time), not QEMU's
	rm -f "$work/out"
	mkfifo "$work/out"
	sed -u 's/\r//g' < "$work/out" | tee -a "$work/console" &
	"${qemu[@]}" -monitor "unix:$work/monitor,server=on,wait=off" \
		< /dev/null > "$work/out" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		t=$((SECONDS - start))
		[ "$up" = 1 ] || ! grep -q 'KPM-VM: guest up' "$work/console" ||
			up=1
		if [ "$t" -ge "$timeout" ] ||
		   { [ "$up" = 0 ] && [ "$t" -ge "$boot_timeout" ]; }; then
			if [ "$up" = 1 ]; then
				echo "vm.sh: the guest is still running after ${t}s"
			else
				echo "vm.sh: the guest did not reach /init in ${t}s"
			fi
			"$top/scripts/vm-where.py" "$work/monitor" \
				${sysmap:+"$sysmap"} || true
			kill "$pid" 2>/dev/null
			wait	# for qemu and for tee to write the last lines
			grep -q 'KPM-VM: guest up' "$work/console" || return 2
			return 1
		fi
	done
	wait "$pid"
	st=$?
	wait	# for tee
	grep -q 'KPM-VM: guest up' "$work/console" && return 0
	echo "vm.sh: qemu exited with status $st after $((SECONDS - start))s, before /init"
	return 2
}

# Up to three boots more: with another guest on the host's two cores, the
# early-boot oops (an int3 of a text_poke_bp() under TCG, in
# sched_clock_cpu) came three times in one make test, twice in a row.
set +e
for boot in 1 2 3 4; do
	run_guest
	[ $? -eq 2 ] && [ "$boot" -lt 4 ] || break
	echo "vm.sh: booting once more ($((boot + 1)) of 4)"
done
set -e

# the host's CPU time that the guest took, for run.sh's timeline: QEMU's
# over every boot, and the little of this script's helpers (cpio, sed,
# tee), all reaped. times itself, not in a subshell, which would start
# from nothing.
times > "$work/times"
echo "KPM-VM: host CPU $(awk 'NR == 2 {
	for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] }
	printf "%d", s }' "$work/times") s"
rc=$(sed -n 's/^KPM-VM-EXIT: \([0-9]*\)$/\1/p' "$work/console" | tail -n1)
if [ -z "$rc" ]; then
	echo "vm.sh: the guest did not finish (timeout ${timeout}s or crash)" >&2
	exit 1
fi
exit "$rc"
