#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An md RAID6 over 6 loop devices (the HDD tier of a typical pool): data
# written survives one and then two failed members, read back with O_DIRECT.
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
want=$(vm_sha256 /tmp/data)
assert_eq "array contents" "$want" "$(vm_sha256 /dev/md0)"

step "fail ${members[2]}"
mdadm /dev/md0 --fail "${members[2]}"
grep -q '\[6/5\]' /proc/mdstat || fail "array not degraded: $(cat /proc/mdstat)"
vm_drop_caches
assert_eq "contents with one member failed" "$want" "$(vm_sha256 /dev/md0)"

step "fail ${members[4]} too"
mdadm /dev/md0 --fail "${members[4]}"
grep -q '\[6/4\]' /proc/mdstat || fail "array not doubly degraded: $(cat /proc/mdstat)"
vm_drop_caches
assert_eq "contents with two members failed" "$want" "$(vm_sha256 /dev/md0)"
cat /proc/mdstat

mdadm --stop /dev/md0
echo "md-raid6: ok"
