#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The state directory's device starts failing writes (dm-flakey with
# error_writes under the ext4 that holds it; the ext4 aborts its journal and
# turns read-only) before each save point: a pool's creation, an attach, a
# pin, a schedule change, a move's commit, a detach's release, and with
# TIERD_STATE_EIO_LONG=1 a detach's moves. Each fails saying the state cannot
# be saved; the volume keeps taking writes and reading them back; a move then
# fails on the state and the pool refuses moves, `pool show` saying why.
# Started again before the heal, tierd refuses to, saying why. Healed
# (tierd stopped, the ext4 checked and mounted again), tierd activates every
# pool with the map its devices hold: what committed to them, nothing the
# state missed.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror dm-flakey ext4
hdd=$(vm_loop_create 48M) ssd=$(vm_loop_create 32M) hdd2=$(vm_loop_create 16M)
hdd3=$(vm_loop_create 16M)
st_loop=$(vm_loop_create 32M)
st_mm=$(majmin "$st_loop") st_sectors=$(blockdev --getsz "$st_loop")
echo "0 $st_sectors linear $st_mm 0" | dmsetup create statedev
mkfs.ext4 -q /dev/mapper/statedev
mkdir -p /tmp/st
mount /dev/mapper/statedev /tmp/st
TIERD_STATE=/tmp/st/tierd
vol=/dev/mapper/tank E=$((1 << 20))
trap 'rc=$?; [ $rc = 0 ] || { tail -n 40 /tmp/tierd.log; dmesg | tail -n 20; dmsetup table; } >&2' EXIT

tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok pool create spare --hdd "$hdd2" --extent-size 1M
size=$(blockdev --getsize64 $vol) spare_size=$(blockdev --getsize64 /dev/mapper/spare)
vm_random_file /tmp/data "$size"
vm_random_file /tmp/spare "$spare_size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
dd if=/tmp/spare of=/dev/mapper/spare bs=1M oflag=direct status=none
spare_table=$(dmsetup table spare)
want=$(vm_digest /tmp/data) spare_want=$(vm_digest /tmp/spare)

# state_device fail|heal: the state's device fails every write (reads still
# work), or works again. Before failing, the suspend freezes the ext4, so what
# was written before reached the device; an ext4 that met the errors cannot
# freeze (nor write anything), so healing suspends without.
state_device() {
	if [ "$1" = fail ]; then
		echo "0 $st_sectors flakey $st_mm 0 0 1 1 error_writes" | dmsetup reload statedev
		dmsetup suspend statedev
	else
		echo "0 $st_sectors linear $st_mm 0" | dmsetup reload statedev
		dmsetup suspend --nolockfs statedev
	fi
	dmsetup resume statedev
}
ssd_used() {
	pool_field tank '[.tiers[] | select(.class == "ssd") | .used_extents] | add // 0'
}
nr_devices() {
	pool_field tank '[.tiers[].devices[]] | length'
}
# O_DIRECT reads: no sync, which an ext4 that met the errors may make slow.
check() {
	assert_eq "tank's contents $1" "$want" "$(vm_digest $vol "$size")"
}
check_spare() {
	assert_eq "spare's contents $1" "$spare_want" "$(vm_digest /dev/mapper/spare "$spare_size")"
}
# The volume takes writes and gives them back while the state fails.
rewrite() {
	vm_random_file /tmp/new $((2 * E))
	dd if=/tmp/new of=$vol bs=1M seek="$1" oflag=direct conv=notrunc status=none ||
		fail "a write to the volume failed"
	dd if=/tmp/new of=/tmp/data bs=1M seek="$1" conv=notrunc status=none
	want=$(vm_digest /tmp/data)
}
# refused TIER WHAT: after WHAT failed on the state, a move to TIER fails on
# the state too (or is refused already, when WHAT was a move), and then the
# pool refuses moves, pool show saying why.
refused() {
	tierctl_fails 1 "cannot save the state: [a-z]" extent move tank 20 4 --tier "$1"
	grep "could not move" /tmp/tierd.log | grep -q "a device failed" &&
		fail "a move that failed on the state is logged as a device failure"
	grep -q "could not move .*cannot save the state" /tmp/tierd.log ||
		fail "the log does not say why the move failed"
	pool_field tank .moves_refused | grep -q "cannot save the state: [a-z]" ||
		fail "pool show does not say why moves are refused: $(pool_field tank .moves_refused)"
	grep -q "^Moves are refused until tierd restarts" <<<"$("$TIERCTL" pool show tank)" ||
		fail "pool show's text does not say moves are refused"
	tierctl_fails 1 "takes no moves until tierd restarts: .*cannot save the state" \
		extent move tank 20 4 --tier "$1"
	rewrite 36
	check "with the state failing ($2)"
}
# heal: tierd stops (if it runs), the state's device works again, its ext4
# is checked and mounted again, and tierd starts: every pool active, the idle
# ones with their tables.
heal() {
	if [ -n "$TIERD_PID" ]; then
		kill -0 "$TIERD_PID" || fail "tierd died"
		tierd_stop
	fi
	state_device heal
	umount /tmp/st
	local rc=0
	e2fsck -fy /dev/mapper/statedev >/tmp/fsck.log 2>&1 || rc=$?
	[ "$rc" -le 1 ] || { cat /tmp/fsck.log; fail "e2fsck: status $rc"; }
	mount /dev/mapper/statedev /tmp/st
	tierd_start
	assert_eq "pools after the restart" "$pools" "$("$TIERCTL" pool list --json | jq -r '[.pools[].name] | join(" ")')"
	assert_eq "active pools after the restart" "$pools" \
		"$("$TIERCTL" pool list --json | jq -r '[.pools[] | select(.state == "active") | .name] | join(" ")')"
	assert_eq "spare's table after the restart" "$spare_table" "$(dmsetup table spare)"
	assert_eq "moves refused after the restart" null "$(pool_field tank .moves_refused)"
	check "after the restart"
	check_spare "after the restart"
	[ -z "${third_table:-}" ] ||
		assert_eq "third's table after the restart" "$third_table" "$(dmsetup table third)"
}

step "pool create, attach, pin and schedule set while the state's device fails writes (at ${SECONDS}s)"
table=$(dmsetup table tank) pools="spare tank"
# What was stored before stays, what failed is not there. The schedule
# stays manual: no run moves anything behind the test's back.
tierctl_ok pin tank 32M 2M --tier hdd >/dev/null
tierctl_ok schedule set tank --max-bytes 5M >/dev/null
pins() { pool_field tank '[.pins[] | "\(.first_extent)+\(.extents):\(.tier)"] | join(" ")'; }
max_bytes() { "$TIERCTL" schedule show tank --json | jq -r .schedule.max_bytes; }
assert_eq "pins" "32+2:hdd" "$(pins)"
assert_eq "max bytes a run" $((5 * E)) "$(max_bytes)"
state_device fail
tierctl_fails 1 "cannot save the state: [a-z]" pool create third --hdd "$hdd3" --extent-size 1M
tierctl_fails 1 "cannot save the state: [a-z]" tier attach tank --ssd "$ssd" --no-grow
tierctl_fails 1 "cannot store the pins of pool tank: [a-z]" pin tank 0 4M --tier ssd
tierctl_fails 1 "cannot store the settings of pool tank: [a-z]" schedule set tank --max-bytes 9M
refused ssd attach
# Restarted before the state heals, tierd refuses to start and says why; the
# volume stays as it is and keeps working.
table_now=$(dmsetup table tank)
tierd_stop
rc=0
timeout 60 "$TIERD" --state-dir "$TIERD_STATE" --socket "$TIERD_SOCKET" \
	--policy-dir "$TIERD_SOURCE_DIR/policies" 2>/tmp/refused.log || rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
	fail "tierd started on a state it cannot write (status $rc)"
fi
grep -q "cannot open the state: .*tierd.db: [a-z]" /tmp/refused.log ||
	fail "tierd did not say why it did not start: $(cat /tmp/refused.log)"
echo "ok: tierd refuses to start: $(cat /tmp/refused.log)"
assert_eq "tank's table while tierd is down" "$table_now" "$(dmsetup table tank)"
rewrite 36
check "with tierd down"
heal
assert_eq "tank's devices (the devices' generation names the SSD)" 2 "$(nr_devices)"
assert_eq "extents on the SSD" 0 "$(ssd_used)"
assert_eq "tank's table" "$table" "$(dmsetup table tank)"
assert_eq "pins after the restart" "32+2:hdd" "$(pins)"
assert_eq "max bytes a run after the restart" $((5 * E)) "$(max_bytes)"
# The failed create wiped what it wrote: no --force needed.
tierctl_ok pool create third --hdd "$hdd3" --extent-size 1M >/dev/null
pools="spare tank third" third_table=$(dmsetup table third)

step "a move's commit while the state's device fails writes (at ${SECONDS}s)"
state_device fail
tierctl_fails 1 "cannot save the state: [a-z]" extent move tank 4 8 --tier ssd
tierctl_fails 1 "takes no moves until tierd restarts: .*cannot save the state" \
	extent move tank 4 8 --tier ssd
rewrite 5
check "after the failed move"
heal
assert_eq "extents on the SSD (the failed move undone)" 0 "$(ssd_used)"
assert_eq "tank's table" "$table" "$(dmsetup table tank)"
tierctl_ok extent move tank 4 8 --tier ssd
assert_eq "extents on the SSD" 8 "$(ssd_used)"
table=$(dmsetup table tank)

if [ "${TIERD_STATE_EIO_LONG:-0}" = 1 ]; then
	step "detach's moves while the state's device fails writes (at ${SECONDS}s)"
	state_device fail
	tierctl_fails 1 "cannot save the state: [a-z]" tier detach tank --ssd "$ssd"
	refused hdd detach-moves
	heal
	assert_eq "extents on the SSD (the detach undone)" 8 "$(ssd_used)"
	assert_eq "tank's table" "$table" "$(dmsetup table tank)"
fi
tierctl_ok extent move tank 4 8 --tier hdd
assert_eq "extents on the SSD" 0 "$(ssd_used)"
table=$(dmsetup table tank)

step "detach's release while the state's device fails writes (at ${SECONDS}s)"
# No move after it: one would name the SSD on the devices again.
state_device fail
tierctl_fails 1 "cannot save the state: [a-z]" tier detach tank --ssd "$ssd"
rewrite 36
check "with the state failing (detach-release)"
heal
assert_eq "tank's table" "$table" "$(dmsetup table tank)"
assert_eq "tank's devices (the HDD's newest generation has no SSD)" 1 "$(nr_devices)"
# Its superblock stays, of a pool that does not list it: attach takes it back.
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
assert_eq "tank's devices" 2 "$(nr_devices)"
tierctl_ok extent move tank 4 8 --tier ssd
assert_eq "extents on the SSD" 8 "$(ssd_used)"
table=$(dmsetup table tank)
tierd_stop
tierd_start
assert_eq "tank's table after a restart" "$table" "$(dmsetup table tank)"
check "at the end"
check_spare "at the end"
tierd_stop
echo "state-eio: ok"
