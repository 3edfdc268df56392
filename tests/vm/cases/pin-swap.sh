#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Pins on a pool whose capacity is both tiers (created with --hdd and --ssd):
# the HDD is full but for its reserve. A range pinned to the SSD, then
# unpinned and pinned to the HDD, must come back to the HDD: each of its
# extents trades places with an unpinned HDD extent, as pins to the SSD do.
# Twice: runs that move whole extents (--piece-heat=no), then runs that may
# place pieces (the default), whose plan once kept the SSD's headroom with
# demotions the full HDD had no room for, and sent pinned extents home to
# it with no cold extent trading places.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror
vol=/dev/mapper/tank
E=$((1 << 20))
on() { pool_field tank ".tiers[] | select(.class == \"$1\") | .used_extents"; }
# Extents 0-7 start on the HDD (the volume maps the HDD first).
tier_of_range() {
	local n=0 le mm
	mm=$(majmin "$1")
	for le in $(seq 0 7); do
		dmsetup table tank | awk -v s=$((le * E / 512)) -v d="$mm" \
			'$1 <= s && s < $1 + $2 && $4 == d { found = 1 } END { exit !found }' && n=$((n + 1))
	done
	echo $n
}

for opts in --piece-heat=no --piece-heat; do
	hdd=$(vm_loop_create 96M) ssd=$(vm_loop_create 48M)
	tierd_start $opts
	"$TIERCTL" pool create tank --hdd "$hdd" --ssd "$ssd" --extent-size 1M 2>/tmp/create.err ||
		fail "pool create failed: $(cat /tmp/create.err)"
	grep -q "warning: the SSD tier holds the only copy .* $ssd has no redundancy" /tmp/create.err ||
		fail "pool create does not warn that the SSD has no redundancy: $(cat /tmp/create.err)"
	size=$(blockdev --getsize64 $vol)
	vm_random_file /tmp/data "$size"
	dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
	want=$(vm_digest /tmp/data)

	step "tierd $opts: pin 8 extents to the SSD"
	tierctl_ok pin tank 0 8M --tier ssd
	tierctl_ok tier now tank --wait
	assert_eq "pinned extents on the SSD" 8 "$(tier_of_range "$ssd")"

	step "tierd $opts: unpin, pin them to the HDD"
	tierctl_ok unpin tank 0 8M
	tierctl_ok pin tank 0 8M --tier hdd
	tierctl_ok tier now tank --wait
	assert_eq "pinned extents on the HDD" 8 "$(tier_of_range "$hdd")"
	vm_drop_caches
	assert_eq "volume contents" "$want" "$(vm_digest $vol "$size")"
	tierctl_ok pool destroy tank --yes
	tierd_stop
	losetup -d "$hdd" "$ssd"
done
echo "pin-swap: ok"
