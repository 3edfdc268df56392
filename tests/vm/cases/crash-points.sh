#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierd dies (SIGKILL, through the TIERD_FAULT hook) at every step of an
# attach's and of a move's commit protocol, the move with writes landing in a
# moving extent: the restarted tierd adopts the newest metadata, finds a new
# device by its uuid, leaves the volume active with no mirrors and each
# extent either wholly on its source or wholly on its destination (as the
# step says), its accounting matches the table, and the data is intact.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
E=$((4 << 20))
tierd_start
tierctl_ok pool create tank --hdd "$hdd"
vol=/dev/mapper/tank
vm_random_file /tmp/data $((29 * E))
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
# The fault point killed tierd: wait for it, but not forever.
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol $((29 * E)))"
}
tierd_stop TERM

step "killed after the attach reached the devices"
TIERD_FAULT=attach-after-devices tierd_start
"$TIERCTL" tier attach tank --ssd "$ssd" --no-grow && fail "the attach survived its fault point"
tierd_dead
tierd_start
assert_eq "tiers after the restart" 2 "$(pool_field tank '.tiers | length')"
assert_eq "size after the restart" $((29 * E)) "$(blockdev --getsize64 $vol)"
check "after the interrupted attach"
tierd_stop TERM

extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}
ssd_mm=$(majmin "$ssd") hdd_mm=$(majmin "$hdd")

# Each step of a move (tierd/migrate.c, and pool_commit for
# commit-after-devices), the state the volume is left in, and where the
# moving extents must be after the restart: before the commit on the source
# (the HDD), from the devices' commit on the destination (the SSD).
steps=(
	"move-after-mirror-load ACTIVE hdd"
	"move-mirror-suspended SUSPENDED hdd"
	"move-copying ACTIVE hdd"
	"move-in-sync ACTIVE hdd"
	"move-after-final-load ACTIVE hdd"
	"move-after-suspend SUSPENDED hdd"
	"commit-after-devices SUSPENDED ssd"
	"move-after-commit SUSPENDED ssd"
	"move-after-resume ACTIVE ssd"
)
le=3
for s in "${steps[@]}"; do
	read -r fault state where <<<"$s"
	step "killed at $fault, during a move of extents $le-$((le + 1)) with writes to $((le + 1))"
	vm_random_file /tmp/new $E
	TIERD_FAULT=$fault tierd_start
	# Writes to a moving extent; while the volume is suspended they wait
	# for the restart.
	(
		for i in 1 2 3 4; do
			dd if=/tmp/new of=$vol bs=1M seek=$(((le + 1) * 4)) oflag=direct conv=notrunc status=none
		done
	) &
	writer=$!
	"$TIERCTL" extent move tank $le 2 --tier ssd && fail "the move survived $fault"
	tierd_dead
	dmsetup info tank | grep -q "^State: *$state" || fail "expected $state at $fault: $(dmsetup info tank)"
	tierd_start
	wait $writer
	dd if=/tmp/new of=/tmp/data bs=1M seek=$(((le + 1) * 4)) conv=notrunc status=none
	dmsetup info tank | grep -q '^State: *ACTIVE' || fail "not active after the restart: $(dmsetup info tank)"
	assert_eq "pool state" active "$(pool_field tank .state)"
	grep -q "inconsistent" /tmp/tierd.log && fail "tierd found its map inconsistent"
	dmsetup table tank | grep -q mirror && fail "mirror targets left after the restart"
	# A table left loaded by the dead tierd would be swapped in by anyone's resume.
	dmsetup info tank | grep -q '^Tables present: *LIVE$' ||
		fail "after $fault: $(dmsetup info tank | grep '^Tables present')"
	want=$hdd_mm
	[ "$where" = ssd ] && want=$ssd_mm
	assert_eq "extent $le after $fault" "$want" "$(extent_dev $le)"
	assert_eq "extent $((le + 1)) after $fault" "$want" "$(extent_dev $((le + 1)))"
	mapped=$(dmsetup table tank | awk -v d="$ssd_mm" -v e=$((E / 512)) '$4 == d { n += $2 } END { print n / e }')
	assert_eq "SSD extents used (tierd) vs mapped (table)" \
		"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')" "$mapped"
	check "after a kill at $fault"
	tierd_stop TERM
	le=$((le + 2))
done
echo "crash-points: ok"
