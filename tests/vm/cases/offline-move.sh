#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Moves while the pool is deactivated: tierd copies the extents itself with
# io_uring (O_DIRECT, several copies in flight, verified against the source
# with --verify-moves), commits, and the volume activates with the new
# mapping and the same data. A tiering run works the same way. A move after
# a crash that left the devices a generation ahead of the state starts from
# the devices' map.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((4 << 20))
tierd_start --verify-moves
tierctl_ok pool create tank --hdd "$hdd"
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol "$size")"
}
extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}

step "move extents 2-6 to the SSD while the pool is inactive"
tierctl_ok pool deactivate tank
[ -e $vol ] && fail "the volume is still there"
gen=$(pool_field tank .metadata_generation)
tierctl_ok extent move tank 2 5 --tier ssd
[ -e $vol ] && fail "the move activated the volume"
assert_eq "metadata generation after the move" $((gen + 1)) "$(pool_field tank .metadata_generation)"
assert_eq "SSD extents used" 5 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
grep -q "moves were in flight" /tmp/tierd.log && fail "intents were left behind"
tierctl_ok pool activate tank
for le in 2 3 4 5 6; do
	assert_eq "extent $le" "$ssd_mm" "$(extent_dev $le)"
done
assert_eq "extent 7" "$hdd_mm" "$(extent_dev 7)"
check "after the offline move"

step "the mapping survives a restart"
tierd_stop TERM
tierd_start --verify-moves
assert_eq "extent 4 after a restart" "$ssd_mm" "$(extent_dev 4)"
check "after a restart"

step "a tiering run on the inactive pool empties the SSD (policy lowest)"
tierctl_ok policy set tank lowest
tierctl_ok pool deactivate tank
tierctl_ok tier now tank --wait
assert_eq "run result" done "$("$TIERCTL" runs tank --json | jq -r '.runs[0].result')"
assert_eq "run demoted" 5 "$("$TIERCTL" runs tank --json | jq -r '.runs[0].demoted_extents')"
tierctl_ok pool activate tank
assert_eq "devices in the table" "$hdd_mm" "$(dmsetup table tank | awk '{ print $4 }' | sort -u)"
check "after the offline run"

step "killed between the devices' commit and the state's, then another offline move"
# The devices then hold a generation the state lacks. The next offline move
# must start from it: from the state's map it would copy onto the extents
# that generation gave the first move, and write a second, different
# generation under the same number.
tierctl_ok pool deactivate tank
gen=$(pool_field tank .metadata_generation)
tierd_stop TERM
TIERD_FAULT=commit-after-devices tierd_start --verify-moves
"$TIERCTL" extent move tank 10 2 --tier ssd >/dev/null 2>&1 && fail "the move survived its fault point"
tierd_dead
tierd_start --verify-moves
assert_eq "state after the restart" inactive "$(pool_field tank .state)"
tierctl_ok extent move tank 20 2 --tier ssd
assert_eq "generation after both moves" $((gen + 2)) "$(pool_field tank .metadata_generation)"
tierctl_ok pool activate tank
for le in 10 11 20 21; do
	assert_eq "extent $le" "$ssd_mm" "$(extent_dev $le)"
done
check "after the crash and the second offline move"

step "an offline move refused for a missing SSD leaves the pool as it was"
tierctl_ok pool deactivate tank
ssd_file=$(losetup --list --noheadings --output BACK-FILE "$ssd")
losetup -d "$ssd"
tierctl_fails 1 "is missing" extent move tank 25 1 --tier ssd
assert_eq "degraded after the refused move" false "$(pool_field tank .degraded)"
losetup "$ssd" "$ssd_file"
tierctl_ok extent move tank 25 1 --tier ssd
tierctl_ok pool activate tank
assert_eq "extent 25" "$ssd_mm" "$(extent_dev 25)"
check "after the SSD came back"
tierd_stop TERM
echo "offline-move: ok"
