#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pool over an HDD and an SSD loop device keeps known random data across
# deactivate/activate, a tierd restart, kill -9, and an import from the
# devices alone (state deleted, volume removed); destroy wipes its signatures.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 160M)
ssd=$(vm_loop_create 48M)
tierd_start

step "create pool tank over $hdd (HDD) and $ssd (SSD)"
tierctl_ok pool create tank --hdd "$hdd" --ssd "$ssd"
vol=/dev/mapper/tank
[ -b $vol ] || fail "$vol missing"
# 160 MiB and 48 MiB devices, 2 MiB metadata each, 4 MiB extents, 2 kept free
# per device: (39 - 2) + (11 - 2) = 46 extents.
assert_eq "pool size" $((46 * 4 << 20)) "$(pool_field tank .size_bytes)"
assert_eq "volume size" $((46 * 4 << 20)) "$(blockdev --getsize64 $vol)"
assert_eq "HDD extents used" 37 "$(pool_field tank '.tiers[] | select(.class == "hdd") | .used_extents')"
assert_eq "SSD extents used" 9 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
dmsetup table tank
assert_eq "table targets (one run per device)" 2 "$(dmsetup table tank | wc -l)"
tierctl_ok pool list
tierctl_ok pool show tank

step "write random data over the whole volume"
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
want=$(vm_digest /tmp/data)
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$want" "$(vm_digest $vol)"
}
check "after writing"

step "deactivate, activate"
tierctl_ok pool deactivate tank
[ ! -e $vol ] || fail "$vol still there after deactivate"
assert_eq "state after deactivate" inactive "$(pool_field tank .state)"
tierctl_ok pool activate tank
check "after deactivate + activate"

step "tierd stops: the volume stays; tierd starts: the pool is there"
tierd_stop TERM
[ -b $vol ] || fail "$vol gone when tierd stopped"
check "with tierd stopped"
tierd_start
assert_eq "state after restart" active "$(pool_field tank .state)"
check "after a tierd restart"

step "kill -9 and restart"
tierd_stop KILL
tierd_start
check "after kill -9 + restart"

step "tierd killed while the volume was suspended: the restart resumes it"
tierd_stop KILL
dmsetup suspend tank
tierd_start
dmsetup info tank | grep -q '^State: *ACTIVE' || fail "still suspended: $(dmsetup info tank)"
check "after a restart over a suspended volume"

step "a second tierd on the same state refuses to start and touches nothing"
rc=0
"$TIERD" --state-dir "$TIERD_STATE" --socket /run/tierd/second.sock 2>/tmp/second.log || rc=$?
assert_eq "second tierd's exit status" 1 "$rc"
grep -q "another tierd is running" /tmp/second.log || fail "unclear message: $(cat /tmp/second.log)"
check "after a second tierd tried to start"

step "a deactivated pool stays inactive across a restart"
tierctl_ok pool deactivate tank
tierd_stop TERM
tierd_start
assert_eq "state after restart" inactive "$(pool_field tank .state)"
tierctl_ok pool activate tank

step "import from the devices alone"
tierd_stop TERM
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start
assert_eq "pools known before import" 0 "$("$TIERCTL" pool list --json | jq '.pools | length')"
tierctl_ok pool import "$hdd" "$ssd"
check "after import"
assert_eq "SSD extents used after import" 9 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"

step "destroy"
tierctl_fails 1 "give --yes" pool destroy tank
tierctl_fails 1 "in use" pool destroy tank --yes 3<$vol
tierctl_ok pool destroy tank --yes
[ ! -e $vol ] || fail "$vol still there after destroy"
assert_eq "HDD signature after destroy" "" "$(blkid -p -o value -s TYPE "$hdd" || true)"
assert_eq "first bytes of the HDD" 0000000000000000 "$(dd if="$hdd" bs=4096 count=1 iflag=direct status=none | head -c 8 | xxd -p)"
assert_eq "pools after destroy" 0 "$("$TIERCTL" pool list --json | jq '.pools | length')"
tierd_stop TERM
echo "pool-lifecycle: ok"
