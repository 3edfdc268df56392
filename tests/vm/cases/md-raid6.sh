#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An md RAID6 over 6 loop devices (the HDD tier of a typical pool): data
# written survives one and then two failed members, read back with O_DIRECT;
# a pool on it keeps its superblock and metadata slots in separate stripes.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop raid456
members=()
for i in 0 1 2 3 4 5; do
	members+=("$(vm_loop_create 40M)")
done

# The members are fresh zero-filled files, and all-zero data has all-zero P and
# Q parity, so the array is already consistent: --assume-clean skips a resync
# that would only rewrite zeros.
step "create the RAID6 over ${members[*]}"
mdadm --create /dev/md0 --run --quiet --assume-clean --level=6 --chunk=64 \
	--raid-devices=6 --metadata=1.2 "${members[@]}"
cat /proc/mdstat
size=$(blockdev --getsize64 /dev/md0)
[ "$size" -ge $((4 * 36 << 20)) ] || fail "array too small: $size bytes"

step "write $((size >> 20)) MiB of random data"
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=/dev/md0 bs=1M oflag=direct status=none
vm_drop_caches
want=$(vm_digest /tmp/data)
assert_eq "array contents" "$want" "$(vm_digest /dev/md0)"

step "fail ${members[2]}"
mdadm /dev/md0 --fail "${members[2]}"
grep -q '\[6/5\]' /proc/mdstat || fail "array not degraded: $(cat /proc/mdstat)"
vm_drop_caches
assert_eq "contents with one member failed" "$want" "$(vm_digest /dev/md0)"

step "fail ${members[4]} too"
mdadm /dev/md0 --fail "${members[4]}"
grep -q '\[6/4\]' /proc/mdstat || fail "array not doubly degraded: $(cat /proc/mdstat)"
vm_drop_caches
assert_eq "contents with two members failed" "$want" "$(vm_digest /dev/md0)"
cat /proc/mdstat
mdadm --stop /dev/md0

# The RAID5/6 write hole: after a crash on a degraded array, a stripe whose
# write was torn can corrupt the chunks of it nobody wrote. Each of tierd's
# superblock, slot A and slot B must sit in a stripe of its own, so a torn
# commit never takes the slot holding the previous generation.
step "a pool on a fresh RAID6: superblock and both slots in separate stripes"
mdadm --create /dev/md0 --run --quiet --assume-clean --level=6 --chunk=64 \
	--raid-devices=6 --metadata=1.2 "${members[@]}"
stripe=$(cat /sys/block/md0/queue/optimal_io_size)
assert_eq "full stripe of 4 data members x 64 KiB" $((4 * 64 << 10)) "$stripe"
tierd_start
tierctl_ok pool create tank --hdd /dev/md0 --wipe-signatures
read -r slot_a slot_b slot_bytes < <(dd if=/dev/md0 bs=4K count=1 iflag=direct status=none |
	od -An -t u8 -w24 -j 144 -N 24)
echo "stripe $stripe: slot A at $slot_a, slot B at $slot_b, $slot_bytes bytes each"
[ $((slot_a / stripe)) -gt 0 ] || fail "slot A shares the superblock's stripe"
[ $((slot_b / stripe)) -gt $(((slot_a + slot_bytes - 1) / stripe)) ] ||
	fail "slot B shares a stripe with slot A"
vol=/dev/mapper/tank
vm_random_file /tmp/vol "$(blockdev --getsize64 $vol)"
dd if=/tmp/vol of=$vol bs=1M oflag=direct status=none
tierd_stop TERM
tierd_start
assert_eq "pool state after a restart" active "$(pool_field tank .state)"
vm_drop_caches
assert_eq "volume contents" "$(vm_digest /tmp/vol)" "$(vm_digest $vol)"
tierd_stop TERM
dmsetup remove tank
mdadm --stop /dev/md0
echo "md-raid6: ok"
