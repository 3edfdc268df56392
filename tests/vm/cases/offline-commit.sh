#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An offline move whose commit fails on the SSD's metadata slots (they turn
# into the `error` target while the pool is inactive). A device may then hold
# a generation that names the copies while memory names the sources: tierd
# must not activate the pool over its sources until it restarts, since the
# next start adopts the devices' newest generation and would look elsewhere
# than where the writes went. After the restart the pool activates, the data
# is what was written, and writes made then survive the next restart.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror
hdd=$(vm_loop_create 128M) raw=$(vm_loop_create 64M)
sectors=$(blockdev --getsz "$raw")
dmsetup create wl-ssd --table "0 $sectors linear $raw 0"
ssd=/dev/mapper/wl-ssd
vol=/dev/mapper/tank
tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vm_fill_random $vol
tierctl_ok pool deactivate tank

step "the SSD's metadata slots fail their writes"
# The superblock says where the slots are: offsets of A and B, then a slot's size.
read -r slot_a slot_b slot_bytes < <(dd if="$raw" bs=4K count=1 iflag=direct status=none | od -An -t u8 -w24 -j 144 -N 24)
from=$((slot_a / 512)) to=$(((slot_b + slot_bytes) / 512))
printf '0 %s linear %s 0\n%s %s error\n%s %s linear %s %s\n' "$from" "$raw" "$from" \
	$((to - from)) "$to" $((sectors - to)) "$raw" "$to" | dmsetup load wl-ssd
dmsetup suspend wl-ssd
dmsetup resume wl-ssd
tierctl_fails 1 "." extent move tank 4 4 --tier ssd
tierctl_fails 1 "not activated until tierd restarts" pool activate tank

step "the SSD healed, tierd restarted"
dmsetup load wl-ssd --table "0 $sectors linear $raw 0"
dmsetup suspend wl-ssd
dmsetup resume wl-ssd
tierd_stop
tierd_start
tierctl_ok pool activate tank
vm_drop_caches
assert_eq "volume contents after the failed commit" "$want" "$(vm_digest $vol "$size")"
vm_random_file /tmp/more $((8 << 20))
dd if=/tmp/more of=$vol bs=1M seek=4 oflag=direct status=none
dd if=/tmp/more of=/tmp/data bs=1M seek=4 conv=notrunc status=none
tierd_stop
tierd_start
vm_drop_caches
assert_eq "writes made after it, across a restart" "$(vm_digest /tmp/data)" "$(vm_digest $vol "$size")"
tierd_stop
