#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pool whose SSD died for good: `pool drop-missing` gives the extents that
# lived on it zeroed HDD extents and commits the pool without the SSD. A
# zeroing that fails changes nothing. After the drop the pool is whole, the
# lost extents read as zeros and take writes, the rest reads back what was
# written, across a restart and an import from the HDD alone. Killed after
# the devices' commit, the next start takes the devices' generation. A pool
# the SSD grew is refused for lack of room, and one whose HDD is missing,
# nothing changed.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror
hdd=$(vm_loop_create 64M)
ssd=/dev/mapper/dm-ssd
M=$((1 << 20))
tierd_start

# degraded_pool NAME [--no-grow]: a pool of the HDD and a fresh SSD, the
# volume filled with /tmp/data, extents 8-11 and 40-41 on the SSD (if it
# does not grow the volume), then the SSD gone and tierd restarted.
degraded_pool() {
	local raw
	raw=$(vm_loop_create 32M)
	dmsetup create dm-ssd --table "0 $(blockdev --getsz "$raw") linear $raw 0"
	tierctl_ok pool create "$1" --hdd "$hdd" --extent-size 1M --wipe-signatures >/dev/null
	tierctl_ok tier attach "$1" --ssd "$ssd" ${2:-} >/dev/null
	vol=/dev/mapper/$1
	size=$(blockdev --getsize64 "$vol")
	n=$((size / M))
	[ -f /tmp/data ] || vm_random_file /tmp/data "$size"
	if [ -n "${2:-}" ]; then
		dd if=/tmp/data of="$vol" bs=1M oflag=direct status=none
		tierctl_ok extent move "$1" 8 4 --tier ssd >/dev/null
		tierctl_ok extent move "$1" 40 2 --tier ssd >/dev/null
	fi
	tierd_stop
	dmsetup remove "$1"
	dmsetup remove dm-ssd
	losetup -d "$raw" # gone for good: its superblock must not be found on the loop device
	tierd_start
}

# check_volume WHAT FILE: the volume's ranges around the lost ones read as FILE's.
check_volume() {
	local r first count
	vm_drop_caches
	for r in "0 8" "8 4" "12 28" "40 2" "42 $((n - 42))"; do
		read -r first count <<<"$r"
		assert_eq "$1, extents $first-$((first + count - 1))" \
			"$(vm_digest "$2" $((count * M)) $((first * M)))" \
			"$(vm_digest "$vol" $((count * M)) $((first * M)))"
	done
}
devices() { pool_field "$1" '[.tiers[].devices[]] | length'; }
hdd_free() { pool_field "$1" '.tiers[] | select(.class == "hdd") | .free_extents'; }

step "refusals while the pool is whole"
tierctl_ok pool create whole --hdd "$hdd" --extent-size 1M >/dev/null
tierctl_fails 1 "give --yes" pool drop-missing whole
tierctl_fails 2 "has all its devices" pool drop-missing whole --yes
tierctl_ok pool destroy whole --yes

step "the SSD dies while the machine is down"
degraded_pool tank --no-grow
assert_eq "state without the SSD" inactive "$(pool_field tank .state)"
gen=$(pool_field tank .metadata_generation) free=$(hdd_free tank)
# What the drop should leave: the lost extents zeros, the rest as written.
cp /tmp/data /tmp/expect
dd if=/dev/zero of=/tmp/expect bs=1M seek=8 count=4 conv=notrunc status=none
dd if=/dev/zero of=/tmp/expect bs=1M seek=40 count=2 conv=notrunc status=none

step "a zeroing that fails changes nothing"
tierd_stop
TIERD_FAULT=fail:drop-zero tierd_start
# Inactive: drop-missing activates it degraded first.
tierctl_fails 1 "cannot zero extent .* nothing was changed" pool drop-missing tank --yes
assert_eq "degraded after the failed drop" true "$(pool_field tank .degraded)"
assert_eq "lost after the failed drop" 6 "$(pool_field tank .lost_extents)"
assert_eq "generation after the failed drop" "$gen" "$(pool_field tank .metadata_generation)"
assert_eq "devices after the failed drop" 2 "$(devices tank)"
assert_eq "HDD extents given back" "$free" "$(hdd_free tank)"
tierd_stop
tierd_start

step "the drop"
tierctl_ok pool activate tank --degraded >/dev/null
out=$("$TIERCTL" pool drop-missing tank --yes 2>/tmp/progress) ||
	fail "drop-missing failed: $(cat /tmp/progress)"
echo "$out"
grep -q "^Dropped the missing device from pool tank: .*; 6 lost extents now read as zeros" <<<"$out" ||
	fail "drop-missing says '$out'"
assert_eq "state after the drop" active "$(pool_field tank .state)"
assert_eq "degraded after the drop" false "$(pool_field tank .degraded)"
assert_eq "lost after the drop" 0 "$(pool_field tank .lost_extents)"
assert_eq "devices after the drop" 1 "$(devices tank)"
assert_eq "generation after the drop" $((gen + 1)) "$(pool_field tank .metadata_generation)"
assert_eq "HDD extents free after the drop" $((free - 6)) "$(hdd_free tank)"
assert_eq "size after the drop" "$size" "$(blockdev --getsize64 "$vol")"
dmsetup table tank | grep -q error && fail "the table keeps error targets: $(dmsetup table tank)"
check_volume "after the drop" /tmp/expect

step "the former lost ranges take writes"
vm_random_file /tmp/fresh $((6 * M))
for f in /tmp/expect "$vol"; do
	flag=conv=notrunc
	[ -b "$f" ] && flag=oflag=direct
	dd if=/tmp/fresh of="$f" bs=1M count=4 seek=8 $flag status=none
	dd if=/tmp/fresh of="$f" bs=1M skip=4 count=2 seek=40 $flag status=none
done
check_volume "after writing the lost ranges" /tmp/expect

step "restart, then import from the HDD alone"
table=$(dmsetup table tank)
tierd_stop
dmsetup remove tank
tierd_start
assert_eq "state after the restart" active "$(pool_field tank .state)"
assert_eq "degraded after the restart" false "$(pool_field tank .degraded)"
assert_eq "table after the restart" "$table" "$(dmsetup table tank)"
check_volume "after the restart" /tmp/expect
tierd_stop
dmsetup remove tank
rm -rf "$TIERD_STATE"
tierd_start
tierctl_ok pool import "$hdd" >/dev/null
assert_eq "table after the import" "$table" "$(dmsetup table tank)"
check_volume "after the import" /tmp/expect
tierctl_ok pool destroy tank --yes

step "killed after the drop reached the HDD"
degraded_pool tank --no-grow
gen=$(pool_field tank .metadata_generation)
tierd_stop
TIERD_FAULT=drop-after-devices tierd_start
"$TIERCTL" pool drop-missing tank --yes >/dev/null 2>&1 && fail "the drop survived its fault point"
tierd_dead
# The state still names the SSD; the HDD's newest generation does not.
tierd_start
assert_eq "state after the interrupted drop" active "$(pool_field tank .state)"
assert_eq "degraded after the interrupted drop" false "$(pool_field tank .degraded)"
assert_eq "devices after the interrupted drop" 1 "$(devices tank)"
assert_eq "generation after the interrupted drop" $((gen + 1)) "$(pool_field tank .metadata_generation)"
cp /tmp/data /tmp/expect
dd if=/dev/zero of=/tmp/expect bs=1M seek=8 count=4 conv=notrunc status=none
dd if=/dev/zero of=/tmp/expect bs=1M seek=40 count=2 conv=notrunc status=none
check_volume "after the interrupted drop" /tmp/expect
tierctl_ok pool destroy tank --yes

step "no room: a pool the SSD grew"
degraded_pool big
gen=$(pool_field big .metadata_generation)
on_ssd=$(pool_field big '.tiers[] | select(.class == "ssd") | .used_extents')
[ "$on_ssd" -gt 0 ] || fail "nothing on the SSD of a grown pool"
# The HDD keeps its swap reserve of 2 free: no room for any of them.
tierctl_fails 1 "the $on_ssd extents lost with device .* need as many free extents on the remaining devices, which have 0" \
	pool drop-missing big --yes
assert_eq "degraded after the refusal" true "$(pool_field big .degraded)"
assert_eq "generation after the refusal" "$gen" "$(pool_field big .metadata_generation)"
assert_eq "devices after the refusal" 2 "$(devices big)"

step "the HDD missing: refused"
tierctl_ok pool destroy big --yes
raw=$(vm_loop_create 64M)
dmsetup create dm-hdd --table "0 $(blockdev --getsz "$raw") linear $raw 0"
tierctl_ok pool create nohdd --hdd /dev/mapper/dm-hdd --ssd "$hdd" --extent-size 1M --wipe-signatures >/dev/null
tierd_stop
dmsetup remove nohdd
dmsetup remove dm-hdd
losetup -d "$raw"
tierd_start
tierctl_ok pool activate nohdd --degraded >/dev/null
gen=$(pool_field nohdd .metadata_generation)
tierctl_fails 2 "its missing device .* is the HDD tier" pool drop-missing nohdd --yes
assert_eq "degraded after the refusal" true "$(pool_field nohdd .degraded)"
assert_eq "generation after the refusal" "$gen" "$(pool_field nohdd .metadata_generation)"
tierd_stop
