#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Heat that cannot start again leaves none of its dm-stats regions behind.
# Two pools share a heat budget of 1 MiB: big takes nearly all of it in
# zones, tank, small, an area per extent of what is left. tank's volume then
# grows by an SSD of 64 GiB, its heat starts again, and no layout of its
# extents fits what big left: tank's heat is off, with the reason, and its
# volume keeps none of tierd's regions (each would go on counting every
# I/O and holding kernel memory the budget no longer sees). big's heat
# stays on. A restart of tierd with a budget that holds both turns tank's
# heat on again.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 64M)
big_hdd=$(vm_loop_create 64G)
ssd=$(vm_loop_create 64G)
regions() { dmsetup message "$1" 0 "@stats_list tierd" | grep -c . || true; }

step "two pools in one budget of 1 MiB"
tierd_start --sample-interval 1 --heat-kernel-memory 1M
tierctl_ok pool create big --hdd "$big_hdd" >/dev/null
tierctl_ok pool create tank --hdd "$hdd" >/dev/null
"$TIERCTL" pool show tank --json | jq -c '.pool.heat | {enabled, areas, zones, piece_areas, kernel_bytes}'
"$TIERCTL" pool show big --json | jq -c '.pool.heat | {enabled, areas, zones, fine_zones, max_fine_zones, kernel_bytes}'
assert_eq "tank's heat on" true "$(pool_field tank .heat.enabled)"
assert_eq "big's heat on" true "$(pool_field big .heat.enabled)"
[ "$(regions tank)" -gt 0 ] || fail "tank has no dm-stats region of tierd's"

step "tank grows past what the budget has left: its heat off, its regions gone"
tierctl_ok tier attach tank --ssd "$ssd" >/dev/null
off() { [ "$(pool_field tank .heat.enabled)" = false ]; }
wait_until 20 "tank's heat off" off
reason=$(pool_field tank .heat.reason)
echo "$reason"
[[ "$reason" == "heat is off: "* ]] || fail "tank's heat off without its reason: '$reason'"
dmsetup message tank 0 "@stats_list tierd"
assert_eq "tierd's dm-stats regions on tank with its heat off" 0 "$(regions tank)"
assert_eq "big's heat on" true "$(pool_field big .heat.enabled)"
[ "$(regions big)" -gt 0 ] || fail "big lost its dm-stats regions"

step "a budget that holds both: tank's heat on again"
tierd_stop TERM
tierd_start --sample-interval 1 --heat-kernel-memory 64M
wait_until 20 "tank active" test -e /dev/mapper/tank
on() { [ "$(pool_field tank .heat.enabled)" = true ]; }
wait_until 20 "tank's heat on" on
[ "$(regions tank)" -gt 0 ] || fail "tank has no dm-stats region of tierd's with its heat on"
