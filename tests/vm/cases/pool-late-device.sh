#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pool whose devices come after tierd (an md array assembled late, an SSD
# plugged in later): the pool waits, says why, and activates by itself when
# the kernel announces the last device, or when a retry (every 5 s) finds it
# without the kernel's events, with the data intact; after --device-timeout
# it is reported, and activated degraded only with --activate-degraded.
# vm-memory: 1024
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror raid1
a=$(vm_loop_create 96M) b=$(vm_loop_create 96M) raw=$(vm_loop_create 48M)
raw_file=$(losetup -nO BACK-FILE "$raw")
mdadm --create /dev/md/late --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
	--assume-clean "$a" "$b"
md=$(readlink -f /dev/md/late)
vol=/dev/mapper/tank
tierd_start
tierctl_ok pool create tank --hdd "$md" --extent-size 1M
tierctl_ok tier attach tank --ssd "$raw" --no-grow
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
tierctl_ok extent move tank 0 8 --tier ssd
want=$(vm_digest /tmp/data)

# down: tierd, the volume, the array and the SSD, as after a shutdown.
all_down() {
	tierd_stop
	dmsetup remove tank
	mdadm --stop "$md" >/dev/null 2>&1
	losetup -d "$raw"
}
ssd_back() { raw=$(losetup --find --show "$raw_file"); }
data_ok() {
	vm_drop_caches
	assert_eq "$1" "$want" "$(vm_digest $vol)"
}
state() { pool_field tank .state; }
is_active() { [ "$(state)" = active ]; }

step "the array and the SSD come after tierd"
all_down
: >/tmp/tierd.log
tierd_start --device-timeout 120
assert_eq "state before the devices" inactive "$(state)"
pool_field tank .inactive_reason | grep -q "missing" ||
	fail "pool show does not say why: $(pool_field tank .inactive_reason)"
grep -q "1 pool waiting for devices (device-timeout 120 s)" /tmp/tierd.log ||
	fail "no waiting line in the log: $(cat /tmp/tierd.log)"
mdadm --assemble "$md" "$a" "$b" --quiet
sleep 2
assert_eq "with the array but not the SSD" inactive "$(state)"
ssd_back
wait_until 20 "the pool activating when its SSD appears" is_active
grep -q "pool tank active (its devices appeared)" /tmp/tierd.log ||
	fail "no activation line: $(tail -5 /tmp/tierd.log)"
assert_eq "degraded" false "$(pool_field tank .degraded)"
data_ok "the volume after a late activation"

step "only the SSD comes late, after the array is there"
all_down
mdadm --assemble "$md" "$a" "$b" --quiet
tierd_start
assert_eq "state without the SSD" inactive "$(state)"
ssd_back
wait_until 20 "the pool activating when its SSD appears" is_active
data_ok "the volume"

step "no kernel events (or one that came too early): a periodic retry finds the SSD"
all_down
mdadm --assemble "$md" "$a" "$b" --quiet
: >/tmp/tierd.log
TIERD_FAULT=fail:uevent-listen tierd_start --device-timeout 120
grep -q "cannot listen to the kernel's device events" /tmp/tierd.log ||
	fail "no line about the missing events: $(cat /tmp/tierd.log)"
assert_eq "state without the SSD" inactive "$(state)"
ssd_back
wait_until 20 "the pool activating on a retry" is_active
grep -q "pool tank active (its devices appeared)" /tmp/tierd.log ||
	fail "no activation line: $(tail -5 /tmp/tierd.log)"
# The reason, said at start-up, did not change: no retry says it again.
grep -q "still waits" /tmp/tierd.log && fail "a retry repeated the reason: $(cat /tmp/tierd.log)"
data_ok "the volume after a retry"

step "the SSD never comes: reported after the timeout, left inactive"
all_down
mdadm --assemble "$md" "$a" "$b" --quiet
: >/tmp/tierd.log
tierd_start --device-timeout 2
wait_until 20 "the timeout's report" grep -q "pool tank is still inactive after 2 s:.*missing" \
	/tmp/tierd.log
sleep 1
assert_eq "state after the timeout, without --activate-degraded" inactive "$(state)"

step "the SSD never comes, with --activate-degraded: degraded after the timeout"
tierd_stop
: >/tmp/tierd.log
tierd_start --device-timeout 3 --activate-degraded
assert_eq "state before the timeout" inactive "$(state)"
wait_until 20 "degraded activation after the timeout" is_active
assert_eq "degraded" true "$(pool_field tank .degraded)"
grep -q "pool tank active and degraded (activate-degraded, after device-timeout)" /tmp/tierd.log ||
	fail "no degraded activation line: $(tail -5 /tmp/tierd.log)"
vm_drop_caches
assert_eq "the HDD's extents" "$(tail -c +$((8 * 1048576 + 1)) /tmp/data | md5sum | cut -d' ' -f1)" \
	"$(dd if=$vol bs=1M skip=8 iflag=direct status=none | md5sum | cut -d' ' -f1)"
tierd_stop
echo "pool-late-device: ok"
