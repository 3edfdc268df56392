#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pool whose SSD died: it stays inactive and says why; activated with
# --degraded, the extents that lived on the SSD fail every read and write
# with EIO (never other data) and the rest reads back what was written; no
# move is taken; `pool import --degraded` works from the HDD alone; with the
# SSD back, a plain activation brings the whole volume back.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror
hdd=$(vm_loop_create 128M) raw=$(vm_loop_create 64M)
raw_file=$(losetup -nO BACK-FILE "$raw")
ssd_up() { dmsetup create wl-ssd --table "0 $(blockdev --getsz "$raw") linear $raw 0"; }
ssd_up
ssd=/dev/mapper/wl-ssd
vol=/dev/mapper/tank
M=$((1 << 20))
tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vm_fill_random $vol
tierctl_ok extent move tank 8 4 --tier ssd
# What survives without the SSD: all but extents 8-11.
head -c $((8 * M)) /tmp/data >/tmp/kept
tail -c +$((12 * M + 1)) /tmp/data >>/tmp/kept
kept_of_volume() {
	{
		dd if=$vol bs=1M count=8 iflag=direct status=none
		dd if=$vol bs=1M skip=12 iflag=direct status=none
	} | md5sum | cut -d' ' -f1
}
check_degraded() {
	assert_eq "degraded" true "$(pool_field tank .degraded)"
	assert_eq "lost bytes" $((4 * M)) "$(pool_field tank .lost_bytes)"
	assert_eq "lost range" "8 4" "$(pool_field tank '.lost_ranges[0] | "\(.first_extent) \(.extents)"')"
	assert_eq "the SSD is missing" true \
		"$(pool_field tank '.tiers[] | select(.class == "ssd") | .devices[0].missing')"
	vm_drop_caches
	assert_eq "the HDD's extents" "$(vm_digest /tmp/kept)" "$(kept_of_volume)"
	dd if=$vol of=/dev/null bs=1M skip=9 count=1 iflag=direct status=none 2>/dev/null &&
		fail "a read of a lost extent succeeded"
	dd if=/dev/zero of=$vol bs=4K seek=$((10 * 256)) count=1 oflag=direct status=none 2>/dev/null &&
		fail "a write to a lost extent succeeded"
	echo "ok: a lost extent fails its reads and writes"
}

step "the SSD dies while the machine is down"
tierd_stop
dmsetup remove tank
dmsetup remove wl-ssd
losetup -d "$raw" # gone: tierd would find its superblock on the loop device too
tierd_start
assert_eq "state without the SSD" inactive "$(pool_field tank .state)"
pool_field tank .inactive_reason | grep -q "SSD device .* is missing" ||
	fail "pool show does not say why: $(pool_field tank .inactive_reason)"
text=$("$TIERCTL" pool show tank 2>&1)
grep -q "inactive: .*missing" <<<"$text" || fail "pool show's text does not say why: $text"
tierctl_fails 1 "missing; 'tierctl pool activate tank --degraded'" pool activate tank

step "degraded activation"
tierctl_ok pool activate tank --degraded
check_degraded
grep -q "^Degraded: 4.0 MiB" <<<"$("$TIERCTL" pool show tank)" || fail "pool show's text does not say degraded"
tierctl_fails 1 "degraded" extent move tank 0 1 --tier ssd
spare=$(vm_loop_create 64M)
tierctl_fails 1 "degraded" tier attach tank --ssd "$spare" 

step "import from the HDD alone"
tierd_stop
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start
tierctl_fails 1 "not among those given; with --degraded" pool import "$hdd"
tierctl_ok pool import "$hdd" --degraded
check_degraded

step "the SSD is back"
tierctl_ok pool deactivate tank
raw=$(losetup --find --show "$raw_file")
ssd_up
tierctl_ok pool activate tank
assert_eq "degraded with every device" false "$(pool_field tank .degraded)"
vm_drop_caches
assert_eq "the whole volume" "$want" "$(vm_digest $vol "$size")"
tierctl_ok extent move tank 8 4 --tier hdd
tierd_stop
