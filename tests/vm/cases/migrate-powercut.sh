#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The power fails during a move: in the middle of a batch's copy (with writes
# going through the mirrors), right after a batch's commit with the volume
# still suspended, and between the commit's device write and its state write.
# After each reboot tierd activates the pool on its own, its extent map passes
# the activation check, the table has no mirrors and maps each extent where
# the newest committed generation says, and the volume holds the data written
# before.
# vm-disks: 320M 320M 64M
# vm-boots: 4
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

# /dev/vda is the HDD, /dev/vdb the SSD; tierd's state lives on an ext4 on
# /dev/vdc, so that it survives the power cuts as on a real machine.
hdd=/dev/vda ssd=/dev/vdb
# 4 MiB extents: a batch's copy lasts long enough to be caught.
E=$((4 << 20))
FIRST=2 COUNT=32
mkdir -p /run/state
[ "$TIERD_VM_BOOT" = 1 ] && mkfs.ext4 -q /dev/vdc
mount /dev/vdc /run/state
TIERD_STATE=/run/state/tierd
vol=/dev/mapper/tank
hdd_mm=$(majmin $hdd) ssd_mm=$(majmin $ssd)

# After a reboot: active on its own, map consistent, data intact; sets
# LAST_ON_SSD to how many extents of the first move's range sit on the SSD.
check_after_boot() {
	local bad on_ssd
	tierd_start --verbose
	cat /tmp/tierd.log >&2
	assert_eq "pool state after the power cut" active "$(pool_field tank .state)"
	bad=$(grep -E "inconsistent|not activating|cannot" /tmp/tierd.log || true)
	[ -z "$bad" ] || fail "tierd complained at activation: $bad"
	dmsetup info tank | grep -q '^State: *ACTIVE' || fail "volume not active: $(dmsetup info tank)"
	dmsetup table tank | grep -q mirror && fail "mirror targets after the power cut"
	on_ssd=$(extents_on tank "$ssd_mm" $FIRST $COUNT $E)
	assert_eq "extents $FIRST-$((FIRST + COUNT - 1)) on one tier or the other" $COUNT \
		$((on_ssd + $(extents_on tank "$hdd_mm" $FIRST $COUNT $E)))
	assert_eq "SSD extents used (tierd) vs mapped (table)" \
		"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')" \
		"$(dmsetup table tank | awk -v d="$ssd_mm" -v e=$((E / 512)) '$4 == d { n += $2 } END { print n / e }')"
	vm_drop_caches
	assert_eq "volume contents after the power cut" "$(cat "$VM_SHARE/want")" \
		"$(vm_digest $vol "$(cat "$VM_SHARE/size")")"
	LAST_ON_SSD=$on_ssd
}
# cut_at_fault STEP: a one-batch move that kills tierd at STEP, then the power.
cut_at_fault() {
	local first=$1
	tierd_stop TERM
	TIERD_FAULT=$2 tierd_start --verbose
	"$TIERCTL" extent move tank "$first" 16 --tier ssd && fail "the move survived $2"
	for i in $(seq 100); do
		kill -0 "$TIERD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$TIERD_PID" 2>/dev/null && fail "tierd did not die at $2"
	dmsetup info tank | grep -q '^State: *SUSPENDED' || fail "expected the volume suspended at $2"
	echo "$first" >"$VM_SHARE/moved"
	vm_power_cut
}
# expect_moved: after a cut that followed a commit, that batch is on the SSD.
expect_moved() {
	local first
	first=$(cat "$VM_SHARE/moved")
	assert_eq "extents $first-$((first + 15)) on the SSD (committed before the cut)" 16 \
		"$(extents_on tank "$ssd_mm" "$first" 16 $E)"
}

case "$TIERD_VM_BOOT" in
1)
	tierd_start --verbose
	tierctl_ok pool create tank --hdd $hdd --extent-size 4M
	tierctl_ok tier attach tank --ssd $ssd --no-grow
	size=$(blockdev --getsize64 $vol)
	vm_random_file /tmp/data "$size"
	dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
	vm_digest /tmp/data >"$VM_SHARE/want"
	echo "$size" >"$VM_SHARE/size"
	step "power cut in the middle of a batch, with writes through the mirrors"
	# The writer rewrites what is there already: whichever of its writes
	# landed, the expected contents stay the same.
	(
		while :; do
			dd if=/tmp/data of=$vol bs=64K skip=$((FIRST * E / 65536 + 100)) seek=$((FIRST * E / 65536 + 100)) \
				count=512 oflag=direct conv=notrunc status=none
		done
	) &
	"$TIERCTL" extent move tank $FIRST $COUNT --tier ssd >/tmp/move.out 2>&1 &
	mover=$!
	# Past the first commit, in the copy of a later batch.
	# Polled with as few programs as possible: each costs tens of ms here.
	while kill -0 $mover 2>/dev/null; do
		if [[ $(</tmp/tierd.log) == *"extents: stall"* && $(dmsetup table tank) == *mirror* ]]; then
			echo b >/proc/sysrq-trigger
			sleep 30
		fi
	done
	cat /tmp/move.out /tmp/tierd.log
	fail "the move ended before a second batch was caught copying"
	;;
2)
	step "after a cut mid-batch"
	check_after_boot
	echo "extents on the SSD after the cut: $LAST_ON_SSD (whole batches of 16)"
	[ $((LAST_ON_SSD % 16)) = 0 ] || fail "a batch was half committed: $LAST_ON_SSD extents on the SSD"
	[ "$LAST_ON_SSD" -ge 16 ] || fail "the first batch's commit was lost"
	step "power cut right after a commit, the volume suspended"
	cut_at_fault $((FIRST + COUNT)) move-after-commit
	;;
3)
	step "after a cut right after a commit"
	check_after_boot
	expect_moved
	step "power cut between the commit's device write and its state write"
	cut_at_fault $((FIRST + COUNT + 16)) commit-after-devices
	;;
4)
	step "after a cut between the device and state writes"
	check_after_boot
	expect_moved
	grep -q "is newer than the state" /tmp/tierd.log || fail "the newer device generation was not adopted"
	tierd_stop TERM
	echo "migrate-powercut: ok"
	;;
esac
