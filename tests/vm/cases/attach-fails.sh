#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An attach whose write of the SSD's metadata slot fails after the HDD got
# the new generation, which names the SSD. The attach must write the old
# device list back as a newer generation: with the SSD then gone for good,
# the pool still activates, and imports from the HDD alone, with its data.
# vm-memory: 2048
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror
# 80 GiB (sparse) of 1 MiB extents: the SSD's first slot write runs past
# 512 KiB, beyond where libblkid reads when it examines a device, so the
# failing sectors can sit inside that write without failing the examination.
hdd=$(vm_loop_create 80G) raw=$(vm_loop_create 256M) probe=$(vm_loop_create 256M)
vol=/dev/mapper/tank
tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
vm_random_file /tmp/data $((64 << 20))
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
want=$(vm_digest /tmp/data)

step "where a fresh SSD of this size gets its slots"
tierctl_ok tier attach tank --ssd "$probe" --no-grow
# O_DIRECT: tierd wrote the superblock past the page cache.
read -r slot_a _ slot_bytes < <(dd if="$probe" bs=4K count=1 iflag=direct status=none | od -An -t u8 -w24 -j 144 -N 24)
tierctl_ok tier detach tank --ssd "$probe"

step "an attach whose SSD slot write fails"
sectors=$(blockdev --getsz "$raw")
from=$(((slot_a + (600 << 10)) / 512)) to=$(((slot_a + (620 << 10)) / 512))
echo "slot A at byte $slot_a, $slot_bytes bytes; failing sectors $from-$to of $sectors"
printf '0 %s linear %s 0\n%s %s error\n%s %s linear %s %s\n' "$from" "$raw" "$from" \
	$((to - from)) "$to" $((sectors - to)) "$raw" "$to" | dmsetup create wl-ssd
tierctl_fails 1 "cannot write metadata" tier attach tank --ssd /dev/mapper/wl-ssd --no-grow
assert_eq "tiers after the failed attach" 1 "$(pool_field tank '.tiers | length')"

step "the SSD gone for good, tierd restarted"
tierd_stop
dmsetup remove wl-ssd
losetup -d "$raw"
tierd_start
assert_eq "pool state" active "$(pool_field tank .state)"
vm_drop_caches
assert_eq "volume contents" "$want" "$(vm_digest $vol $((64 << 20)))"

step "imported from the HDD alone"
tierd_stop
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start
tierctl_ok pool import "$hdd"
vm_drop_caches
assert_eq "volume contents after the import" "$want" "$(vm_digest $vol $((64 << 20)))"
tierd_stop
