#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# table-targets: moves keep the volume's table within its limit of linear
# targets (tierd --table-targets, docs/scale.md "The volume's table").
# Lone extents moved to the SSD add two targets each until the next would
# pass the limit: that move waits and the job ends partial, saying why; the
# table the kernel holds never has more targets than the limit, and has as
# many as pool show says. A move that adds no target still goes at the
# limit. A tiering run near the limit plans only moves that fit: it ends
# done, saying how many extents it passed over. After a detach and a
# restart the data reads back as written. A reload of tierd.conf (SIGHUP)
# changes the limit.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 160M) ssd=$(vm_loop_create 96M)
vol=/dev/mapper/tank
LIMIT=64
tierd_start --table-targets $LIMIT
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vm_fill_random $vol

kernel_targets() { dmsetup table tank | wc -l; }
check_targets() {
	local shown
	shown=$(pool_field tank .table.targets)
	assert_eq "$1: targets in the kernel's table" "$shown" "$(kernel_targets)"
	[ "$shown" -le $LIMIT ] || fail "$1: $shown targets, over the limit of $LIMIT"
}

step "lone extents to the SSD until the table is full"
assert_eq "targets of a new pool" 1 "$(pool_field tank .table.targets)"
assert_eq "the limit" $LIMIT "$(pool_field tank .table.max_targets)"
# Every other extent from 1 on: each a run of its own on the SSD, two more
# targets (one more for the SSD's run, one for the HDD's run it splits).
for ((le = 1; le < 62; le += 2)); do
	"$TIERCTL" extent move tank $le 1 --tier ssd >/dev/null 2>&1 || fail "move of $le"
done
assert_eq "targets after 31 lone moves" 63 "$(pool_field tank .table.targets)"
check_targets "at 63"
tierctl_fails 1 "could not move: the volume's table would pass its limit of $LIMIT targets" \
	extent move tank 63 1 --tier ssd
assert_eq "extent 63 on the SSD" 0 "$(extents_on tank "$(majmin "$ssd")" 63 1 $((1 << 20)))"
# Read whole first: grep -q may leave before tierctl has written the rest,
# which pipefail then counts as tierctl failing.
show=$("$TIERCTL" pool show tank)
grep -q "^Table: *63 linear targets (limit $LIMIT)" <<<"$show" ||
	fail "pool show's text: $(grep -i table <<<"$show")"
check_targets "after the refused move"

step "a move that adds no target goes at the limit"
# Extent 1 back to the HDD takes the lowest free HDD extent, its own: the
# runs of extents 0-2 become one again.
tierctl_ok extent move tank 1 1 --tier hdd
assert_eq "targets after extent 1 came home" 61 "$(pool_field tank .table.targets)"
check_targets "after the move home"

step "a tiering run near the limit plans what fits"
# The highest policy wants every HDD extent on the SSD (cold ones too,
# the SSD has room for some 30 more); the table has room for 3 targets.
tierctl_ok policy set tank highest
tierctl_ok schedule set tank --io-awareness off
json_save plan tier now tank --dry-run
plan=$(cat "${json_saved[-1]}")
assert_eq "the plan's table" "61 $LIMIT" "$(jq -r '.plan.table | "\(.targets) \(.max_targets)"' <<<"$plan")"
passed=$(jq -r .plan.table.passed_over_extents <<<"$plan")
[ "$passed" -gt 0 ] || fail "the plan passed over no extent: $plan"
text=$("$TIERCTL" tier now tank --dry-run)
grep -q "extents passed over: the volume's table (61 targets) would pass its limit of $LIMIT" <<<"$text" ||
	fail "the dry run's text: $text"
tierctl_ok tier now tank --wait
run=$("$TIERCTL" runs tank --json | jq -c '.runs[0]')
echo "run: $run"
assert_eq "the run's result" done "$(jq -r .result <<<"$run")"
jq -r .message <<<"$run" | grep -q "extents passed over: the volume's table would pass its limit of $LIMIT targets" ||
	fail "the run's message: $run"
check_targets "after the run"

step "a detach; the data reads back"
tierctl_ok tier detach tank --ssd "$ssd"
assert_eq "targets after the detach" "$(kernel_targets)" "$(pool_field tank .table.targets)"
vm_drop_caches
assert_eq "volume contents" "$want" "$(vm_digest $vol "$size")"

step "restart, the limit from tierd.conf"
tierd_stop
echo "table-targets = $LIMIT" >/tmp/tierd.conf
tierd_start --config /tmp/tierd.conf
assert_eq "pool state after the restart" active "$(pool_field tank .state)"
check_targets "after the restart"
json_save pool pool show tank

step "a reload (SIGHUP) raises the limit"
echo "table-targets = 96" >/tmp/tierd.conf
kill -HUP "$TIERD_PID"
limit_is() { [ "$(pool_field tank .table.max_targets)" = "$1" ]; }
wait_until 10 "the limit of 96 targets in force" limit_is 96
grep -q "reload: table-targets $LIMIT -> 96" /tmp/tierd.log || fail "the reload is not in tierd's log"
json_check
tierd_stop
