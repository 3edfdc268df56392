# Helpers for guest tests; sourced by tests/vm/cases/*.sh inside the VM.
# shellcheck shell=bash
set -euo pipefail

: "${TIERD_BUILD_DIR:?TIERD_BUILD_DIR must point at the meson build directory}"
: "${TIERD_SOURCE_DIR:?TIERD_SOURCE_DIR must point at the source tree}"
TIERD=$TIERD_BUILD_DIR/tierd/tierd
TIERCTL=$TIERD_BUILD_DIR/tierctl/tierctl
# Persistent across the boots of one test (it lives on the host).
VM_SHARE=/run/vm

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

step() {
	echo "== $*"
}

# Load kernel modules (and their dependencies) from the unpacked VM kernel.
vm_modprobe() {
	local m
	for m in "$@"; do
		modprobe -d "$TIERD_VM_KERNEL_TREE" "$m" || fail "modprobe $m"
	done
}

# Cut the power now: nothing in the guest's page cache survives, as in a real
# power failure. The next boot of the same test sees the disks as they are.
vm_power_cut() {
	echo "== power cut"
	echo b >/proc/sysrq-trigger
	sleep 30
	fail "power cut did not happen"
}

# vm_loop_create SIZE: a loop device over a fresh tmpfs file; prints its path.
vm_loop_create() {
	local size=$1 file
	mkdir -p /tmp/loops
	file=$(mktemp /tmp/loops/img.XXXXXX)
	truncate -s "$size" "$file"
	losetup --find --show "$file"
}

vm_drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# vm_sha256 FILE_OR_DEV [BYTES [OFFSET]]: checksum of a range, read with
# O_DIRECT so the answer comes from the device, not the page cache.
vm_sha256() {
	local src=$1 bytes=${2:-} offset=${3:-0} flags=skip_bytes,count_bytes
	if [ -b "$src" ]; then
		flags=$flags,direct
		[ -n "$bytes" ] || bytes=$(blockdev --getsize64 "$src")
	else
		[ -n "$bytes" ] || bytes=$(stat -c %s "$src")
	fi
	dd if="$src" bs=1M iflag="$flags" skip="$offset" count="$bytes" status=none |
		sha256sum | cut -d' ' -f1
}

# vm_random_file PATH BYTES: fresh random data to write and compare against.
vm_random_file() {
	head -c "$2" /dev/urandom >"$1"
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	if [ "$2" != "$3" ]; then
		fail "$1: expected '$2', got '$3'"
	fi
	echo "ok: $1 = $3"
}
