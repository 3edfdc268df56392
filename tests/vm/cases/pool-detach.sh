#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Extents moved live to an SSD attached with --no-grow (with writes landing in
# a moving extent), tierd killed in the middle of a move, then the SSD
# detached: the data stays intact and in the end the table maps only the HDD.
# A pool whose SSD is part of its size detaches only with --shrink.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 256M)
ssd=$(vm_loop_create 96M)
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((4 << 20))
tierd_start

tierctl_ok pool create tank --hdd "$hdd"
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
}
# Which device extent LE of the volume sits on, from the kernel's table.
extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}

step "move extents 3-7 and 20-21 to the SSD while extent 4 is being rewritten"
vm_random_file /tmp/new4 "$E"
(
	for i in 1 2 3 4 5 6 7 8; do
		dd if=/tmp/new4 of=$vol bs=1M seek=$((4 * 4)) oflag=direct conv=notrunc status=none
	done
) &
writer=$!
tierctl_ok extent move tank 3 5 --tier ssd
wait $writer
dd if=/tmp/new4 of=/tmp/data bs=1M seek=$((4 * 4)) conv=notrunc status=none
tierctl_ok extent move tank 20 2 --tier ssd
dmsetup table tank
for le in 3 4 5 6 7 20 21; do
	assert_eq "extent $le on the SSD" "$ssd_mm" "$(extent_dev $le)"
done
assert_eq "extent 8 on the HDD" "$hdd_mm" "$(extent_dev 8)"
dmsetup table tank | grep -q mirror && fail "mirror targets left in the table"
assert_eq "SSD extents used" 7 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
check "after the moves"

step "tierd killed during a move, then restarted"
# Killed by the fault hook once the copy runs: a kill timed from outside can
# miss a copy this short.
tierd_stop TERM
TIERD_FAULT=move-copying tierd_start
"$TIERCTL" extent move tank 30 15 --tier ssd && fail "the move survived tierd's death"
tierd_dead
dmsetup table tank | grep -q mirror || fail "no mirrors in the table when tierd died copying"
tierd_start
dmsetup table tank | grep -q mirror && fail "mirror targets left after the restart"
check "after a kill during a move"
used=$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')
assert_eq "SSD extents in the table" "$used" "$(extents_on tank "$ssd_mm" 0 $((size / E)) $E)"

step "detach the SSD"
tierctl_ok tier detach tank --ssd "$ssd"
dmsetup table tank
assert_eq "devices in the table" "$hdd_mm" "$(dmsetup table tank | awk '{ print $4 }' | sort -u)"
assert_eq "tiers after detach" 1 "$(pool_field tank '.tiers | length')"
assert_eq "size after detach" "$size" "$(blockdev --getsize64 $vol)"
check "after detach"
assert_eq "SSD magic after detach" 0000000000000000 "$(dd if="$ssd" bs=4096 count=1 iflag=direct status=none | head -c 8 | xxd -p)"
tierd_stop TERM
tierd_start
check "after detach and a restart"

step "an SSD that is part of the volume's size"
hdd2=$(vm_loop_create 128M)
ssd2=$(vm_loop_create 64M)
tierctl_ok pool create grown --hdd "$hdd2" --ssd "$ssd2"
vol2=/dev/mapper/grown
size2=$(blockdev --getsize64 $vol2)
vm_random_file /tmp/data2 "$size2"
dd if=/tmp/data2 of=$vol2 bs=1M oflag=direct status=none
# 128 MiB HDD: 31 extents, 29 usable; the SSD adds 13.
tierctl_fails 1 "shrink its filesystem to at most 116.0 MiB \\(121634816 bytes\\)" \
	tier detach grown --ssd "$ssd2"
tierctl_fails 1 "is not the SSD of pool grown" tier detach grown --ssd "$hdd2"
tierctl_fails 1 "give --yes" tier detach grown --ssd "$ssd2" --shrink
tierctl_ok tier detach grown --ssd "$ssd2" --shrink --yes
assert_eq "size after --shrink" 121634816 "$(blockdev --getsize64 $vol2)"
vm_drop_caches
assert_eq "kept data after --shrink" "$(vm_digest /tmp/data2 121634816)" "$(vm_digest $vol2)"
assert_eq "devices in the table" "$(majmin "$hdd2")" "$(dmsetup table grown | awk '{ print $4 }' | sort -u)"
tierd_stop TERM
echo "pool-detach: ok"
