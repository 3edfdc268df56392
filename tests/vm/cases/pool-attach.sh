#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attaching an SSD to a live HDD-only pool that holds data: the data stays,
# the volume grows by the SSD's usable capacity (or not, with --no-grow), and
# the new space takes data too.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
hdd2=$(vm_loop_create 128M)
ssd2=$(vm_loop_create 64M)
tierd_start

step "HDD-only pool with data"
tierctl_ok pool create tank --hdd "$hdd"
vol=/dev/mapper/tank
# 128 MiB, 2 MiB metadata, 4 MiB extents, 2 kept free: 31 - 2 = 29 extents.
assert_eq "size before attach" $((29 * 4 << 20)) "$(blockdev --getsize64 $vol)"
assert_eq "tiers before attach" 1 "$(pool_field tank '.tiers | length')"
vm_random_file /tmp/data $((29 * 4 << 20))
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
want=$(vm_digest /tmp/data)

step "attach $ssd while a reader holds the volume open"
exec 3<$vol
tierctl_ok tier attach tank --ssd "$ssd"
exec 3<&-
# 64 MiB SSD: 15 extents, 2 kept free: grows by 13.
assert_eq "size after attach" $(((29 + 13) * 4 << 20)) "$(blockdev --getsize64 $vol)"
assert_eq "pool size after attach" $(((29 + 13) * 4 << 20)) "$(pool_field tank .size_bytes)"
assert_eq "SSD grows the volume" true "$(pool_field tank .ssd_grows_volume)"
vm_drop_caches
assert_eq "old data after attach" "$want" "$(vm_digest $vol $((29 * 4 << 20)))"
vm_random_file /tmp/more $((13 * 4 << 20))
dd if=/tmp/more of=$vol bs=1M seek=$((29 * 4)) oflag=direct status=none
vm_drop_caches
assert_eq "new space holds data" "$(vm_digest /tmp/more)" "$(vm_digest $vol $((13 * 4 << 20)) $((29 * 4 << 20)))"
assert_eq "new space is on the SSD" "$(vm_digest /tmp/more)" "$(vm_digest "$ssd" $((13 * 4 << 20)) $((2 << 20)))"
tierctl_fails 1 "already has an SSD tier" tier attach tank --ssd "$ssd2"

step "the attach survives a restart and an import"
tierd_stop TERM
tierd_start
vm_drop_caches
assert_eq "old data after restart" "$want" "$(vm_digest $vol $((29 * 4 << 20)))"
tierd_stop TERM
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start
tierctl_fails 1 "needs its SSD device" pool import "$hdd"
tierctl_ok pool import "$hdd" "$ssd"
assert_eq "size after import" $(((29 + 13) * 4 << 20)) "$(blockdev --getsize64 $vol)"
vm_drop_caches
assert_eq "old data after import" "$want" "$(vm_digest $vol $((29 * 4 << 20)))"

step "attach --no-grow"
tierctl_ok pool create small --hdd "$hdd2"
size=$(blockdev --getsize64 /dev/mapper/small)
tierctl_ok tier attach small --ssd "$ssd2" --no-grow
assert_eq "size after --no-grow attach" "$size" "$(blockdev --getsize64 /dev/mapper/small)"
assert_eq "SSD grows the volume" false "$(pool_field small .ssd_grows_volume)"
assert_eq "SSD extents used" 0 "$(pool_field small '.tiers[] | select(.class == "ssd") | .used_extents')"
tierd_stop TERM
echo "pool-attach: ok"
