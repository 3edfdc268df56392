#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A batch committed, and the kernel refuses its new table at the resume: the
# volume must not run on its old table, whose places the commit freed and a
# restart does not read. tierd is stopped right after a held copy of pieces
# committed (TIERD_FAULT=stop:move-after-commit), and the SSD shrinks below
# the pieces' container, so the kernel really refuses the table ("too small
# for target") and drops it. The volume must stay suspended, moves refused,
# until the SSD is whole again and tierd's retry resumes the map's table;
# then the pieces are on the SSD, writes reach them, and a restart reads
# what was written. Once more with tierd restarted while the SSD is short:
# activation finds the old table live, and the map's refused, so the volume
# stays suspended until the SSD is whole and the pool is activated.
# docs/migration.md, "A resume that fails".
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd_loop=$(vm_loop_create 48M)
loop_mm=$(majmin "$ssd_loop")
sectors=$((48 << 11))
echo "0 $sectors linear $loop_mm 0" | dmsetup create ssdwrap
ssd=/dev/mapper/ssdwrap
ssd_mm=$(majmin $ssd)
P=16384
trap 'rc=$?; [ $rc = 0 ] || { tail -n 40 /tmp/tierd.log; dmsetup table; dmsetup info tank; } >&2;
	[ -z "${TIERD_PID:-}" ] || kill -CONT "$TIERD_PID" 2>/dev/null || true' EXIT
# ssd_sectors N: the SSD is N sectors long from now on (its first N of the loop device).
ssd_sectors() {
	echo "0 $1 linear $loop_mm 0" | dmsetup reload ssdwrap
	dmsetup suspend ssdwrap
	dmsetup resume ssdwrap
}
tank_state() { dmsetup info -c --noheadings -o attr tank | cut -c3; }
# wait_stopped: until tierd has stopped itself at its fault point.
wait_stopped() {
	local i
	for i in $(seq 300); do
		[ "$(awk '{ print $3 }' "/proc/$TIERD_PID/stat")" = T ] && return 0
		sleep 0.1
	done
	fail "tierd did not stop after the commit"
}

tierd_start
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
tierctl_ok tier attach tank --ssd "$ssd" --no-grow >/dev/null
vol=/dev/mapper/tank
ext=$("$TIERCTL" pool show tank --json | jq .pool.extent_size_bytes)
vm_fill_random $vol
tierd_stop TERM

step "pieces of extent 10 go out; tierd stops once their move committed"
TIERD_FAULT=stop:move-after-commit tierd_start
( rc=0; "$TIERCTL" extent move tank 10 --tier ssd --pieces 0-7 >/tmp/move.out 2>&1 || rc=$?
  echo $rc >/tmp/move.rc ) &
mover=$!
wait_stopped
assert_eq "the volume's state at the commit (s: suspended)" s "$(tank_state)"
container=$(dmsetup table --inactive tank | awk -v d="$ssd_mm" '$4 == d { print $5; exit }')
[ -n "$container" ] || fail "the new table puts nothing on the SSD: $(dmsetup table --inactive tank)"
echo "the pieces' container starts at SSD sector $container"

step "the SSD shrinks to end before the container: the kernel refuses the new table"
ssd_sectors "$container"
kill -CONT "$TIERD_PID"
wait $mover
echo "extent move: status $(cat /tmp/move.rc): $(cat /tmp/move.out)"
[ "$(cat /tmp/move.rc)" != 0 ] || fail "the move says it ended well"
grep -q "does not resume" /tmp/move.out || fail "the move does not say the volume does not resume"
grep -q "too small for target" <(dmesg) || fail "the kernel did not refuse a table: nothing tested"
assert_eq "the volume's state with its table refused (s: suspended)" s "$(tank_state)"
grep -q "does not resume on the map's table after a commit" /tmp/tierd.log ||
	fail "tierd does not say the volume waits"
tierctl_fails 1 "volume is suspended" extent move tank 20 --tier ssd --pieces 0
sleep 6
assert_eq "the volume's state after a retry, the SSD still short (s: suspended)" s "$(tank_state)"

step "the SSD is whole again: tierd's retry resumes the map's table"
ssd_sectors $sectors
for _ in $(seq 150); do
	[ "$(tank_state)" != s ] && break
	sleep 0.1
done
assert_eq "the volume's state with the SSD whole (-: running)" - "$(tank_state)"
grep -q "resumed on the map's table after" /tmp/tierd.log || fail "tierd does not say it resumed"
for i in 0 7; do
	assert_eq "the tier of piece $i of extent 10" ssd "$(pool_tier_at tank $((10 * ext + i * P)))"
done

step "writes reach the pieces where the map has them"
vm_random_file /tmp/piece $((8 * P))
dd if=/tmp/piece of=$vol bs=$P seek=$((10 * ext / P)) oflag=direct conv=notrunc status=none
dd if=/tmp/piece of=/tmp/data bs=$P seek=$((10 * ext / P)) conv=notrunc status=none
vm_drop_caches
assert_eq "the volume's data" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
tierctl_ok extent move tank 20 --tier ssd --pieces 0 >/dev/null

step "again, and tierd restarts while the SSD is short: activation keeps the volume suspended"
tierd_stop TERM
TIERD_FAULT=stop:move-after-commit tierd_start
( "$TIERCTL" extent move tank 12 --tier ssd --pieces 0-7 >/dev/null 2>&1 || true ) &
mover=$!
wait_stopped
container=$(dmsetup table --inactive tank | awk -v d="$ssd_mm" '$4 == d { print $5 }' | sort -n | head -n 1)
ssd_sectors "$container"
kill -CONT "$TIERD_PID"
wait $mover
assert_eq "the volume's state with its table refused (s: suspended)" s "$(tank_state)"
: >/tmp/tierd.log
tierd_stop TERM
tierd_start
grep -q "stays suspended rather than run a table that differs from the map" /tmp/tierd.log ||
	fail "activation does not say the volume stays suspended: $(grep tank /tmp/tierd.log)"
assert_eq "the volume's state after a restart, the SSD still short (s: suspended)" s "$(tank_state)"
ssd_sectors $sectors
tierctl_ok pool activate tank
assert_eq "the volume's state once activated with the SSD whole (-: running)" - "$(tank_state)"
assert_eq "the tier of piece 7 of extent 12" ssd "$(pool_tier_at tank $((12 * ext + 7 * P)))"
vm_random_file /tmp/piece $((8 * P))
dd if=/tmp/piece of=$vol bs=$P seek=$((12 * ext / P)) oflag=direct conv=notrunc status=none
dd if=/tmp/piece of=/tmp/data bs=$P seek=$((12 * ext / P)) conv=notrunc status=none

step "a restart reads what was written"
tierd_stop TERM
tierd_start
assert_eq "the tier of piece 0 of extent 10 after a restart" ssd "$(pool_tier_at tank $((10 * ext)))"
vm_drop_caches
assert_eq "the volume's data after a restart" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
tierd_stop TERM
echo "resume-fails: ok in $SECONDS s"
