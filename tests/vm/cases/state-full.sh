#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The state directory's filesystem fills up (a small tmpfs) and heals again:
# an SSD attached while the state cannot be saved, then moves once it can.
# The failed save must not leave SQLite's map behind memory's for good: the
# next commit saves the whole pool, so the next start activates the pool with
# the map the devices hold and the volume reads back what was written. A move
# whose commit cannot be saved fails saying so, and the pool refuses moves,
# saying why, until tierd restarts.
# A move whose state rows cannot be written before the suspend
# (TIERD_FAULT=fail:state-stage) fails saying so with nothing moved, and the
# pool takes moves again at once: nothing was committed anywhere.
# Last, a state whose map differs from the devices' at the same generation
# (what the failed save left before it was redone): the devices' map wins.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror
hdd=$(vm_loop_create 128M) ssd=$(vm_loop_create 64M)
mkdir -p /tmp/small
mount -t tmpfs -o size=2M tmpfs /tmp/small
TIERD_STATE=/tmp/small/tierd
vol=/dev/mapper/tank
tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
want=$(vm_digest /tmp/data)

step "attach with the state's filesystem full"
dd if=/dev/zero of=/tmp/small/filler bs=4K status=none 2>/dev/null || true
tierctl_fails 1 "cannot save the state: .*(full|disk|space)" tier attach tank --ssd "$ssd" --no-grow
grep -q "pool tank: pool tank" /tmp/tierd.log && fail "a log line names the pool twice"

step "a move with the state's filesystem full"
tierctl_fails 1 "cannot save the state: .*(full|disk|space)" extent move tank 4 8 --tier ssd
grep "could not move" /tmp/tierd.log | grep -q "a device failed" &&
	fail "a move that failed on the state is logged as a device failure"
grep -q "could not move .*cannot save the state" /tmp/tierd.log ||
	fail "the log does not say why the move failed"
pool_field tank .moves_refused | grep -q "cannot save the state" ||
	fail "pool show does not say why moves are refused: $(pool_field tank .moves_refused)"
grep -q "^Moves are refused until tierd restarts" <<<"$("$TIERCTL" pool show tank)" ||
	fail "pool show's text does not say moves are refused"
tierctl_fails 1 "takes no moves until tierd restarts" extent move tank 4 8 --tier ssd
vm_drop_caches
assert_eq "volume contents while moves are refused" "$want" "$(vm_digest $vol "$size")"

step "moves after the state healed and tierd restarted"
rm /tmp/small/filler
tierd_stop
tierd_start
assert_eq "pool state after the restart" active "$(pool_field tank .state)"
assert_eq "extents on the SSD (the failed move undone)" 0 \
	"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
tierctl_ok extent move tank 4 8 --tier ssd
assert_eq "extents on the SSD" 8 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"

step "restart"
tierd_stop
tierd_start
assert_eq "pool state after the restart" active "$(pool_field tank .state)"
assert_eq "extents on the SSD after the restart" 8 \
	"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
vm_drop_caches
assert_eq "volume contents" "$want" "$(vm_digest $vol "$size")"

step "a move whose state rows fail before the suspend"
tierd_stop
TIERD_FAULT=fail:state-stage tierd_start
tierctl_fails 1 "cannot save the state: Input/output error" extent move tank 16 4 --tier ssd
assert_eq "extents on the SSD after the failed stage" 8 \
	"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
assert_eq "moves refused after a failed stage" "" "$(pool_field tank '.moves_refused // ""')"
dmsetup table tank | grep -q mirror && fail "a mirror left after the failed stage"
tierd_stop
tierd_start
tierctl_ok extent move tank 16 4 --tier ssd
assert_eq "extents on the SSD after the move" 12 \
	"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
vm_drop_caches
assert_eq "volume contents after the moves" "$want" "$(vm_digest $vol "$size")"

step "the state's map differs from the devices' at the same generation"
tierd_stop
# Extents 0 and 1 swap places: the run of [0, 4) becomes three.
sqlite3 "$TIERD_STATE/tierd.db" "
	UPDATE extent_run SET le = 2, nr = nr - 2, pe = pe + 2 WHERE le = 0 AND pe = 0 AND nr > 2;
	INSERT INTO extent_run SELECT pool_id, 0, 1, dev, 1 FROM extent_run WHERE le = 2;
	INSERT INTO extent_run SELECT pool_id, 1, 1, dev, 0 FROM extent_run WHERE le = 2;"
assert_eq "runs of the state's map edited" "0|1|1 1|1|0" \
	"$(sqlite3 "$TIERD_STATE/tierd.db" "SELECT le, nr, pe FROM extent_run WHERE le < 2" | tr '\n' ' ' | sed 's/ $//')"
tierd_start
grep -q "differs from generation" /tmp/tierd.log || fail "tierd did not notice the maps differ"
vm_drop_caches
assert_eq "volume contents with the devices' map" "$want" "$(vm_digest $vol "$size")"
tierd_stop
