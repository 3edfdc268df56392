#!/bin/bash
# tierd dies (SIGKILL, through the TIERD_FAULT hook) after an attach or a
# move has reached the devices' metadata but not the state: the restarted
# tierd adopts the newer metadata, finds a new device by its uuid, resumes
# the volume it left suspended, and the data is intact.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
majmin() { local mm; mm=$(stat -L -c '%t:%T' "$1"); echo "$((16#${mm%:*})):$((16#${mm#*:}))"; }
E=$((4 << 20))
tierd_start
tierctl_ok pool create tank --hdd "$hdd"
vol=/dev/mapper/tank
vm_random_file /tmp/data $((29 * E))
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
# The fault point killed tierd: wait for it, but not forever.
tierd_dead() {
	local i
	for i in $(seq 100); do
		kill -0 "$TIERD_PID" 2>/dev/null || { wait "$TIERD_PID" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	fail "tierd did not die at its fault point"
}
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_sha256 /tmp/data)" "$(vm_sha256 $vol $((29 * E)))"
}
tierd_stop TERM

step "killed after the attach reached the devices"
TIERD_FAULT=attach-after-devices tierd_start
"$TIERCTL" tier attach tank --ssd "$ssd" --no-grow && fail "the attach survived its fault point"
tierd_dead
tierd_start
assert_eq "tiers after the restart" 2 "$(pool_field tank '.tiers | length')"
assert_eq "size after the restart" $((29 * E)) "$(blockdev --getsize64 $vol)"
check "after the interrupted attach"
tierd_stop TERM

step "killed while committing a move, with the volume suspended"
TIERD_FAULT=commit-after-devices tierd_start
"$TIERCTL" extent move tank 3 2 --tier ssd && fail "the move survived its fault point"
tierd_dead
dmsetup info tank | grep -q '^State: *SUSPENDED' || fail "expected the volume suspended: $(dmsetup info tank)"
tierd_start
dmsetup info tank | grep -q '^State: *ACTIVE' || fail "still suspended: $(dmsetup info tank)"
dmsetup table tank | grep -q mirror && fail "mirror targets left after the restart"
dmsetup table tank
extent_dev() {
	dmsetup table tank | awk -v s=$(($1 * E / 512)) '$1 <= s && s < $1 + $2 { print $4 }'
}
assert_eq "extent 3 after the restart" "$(majmin "$ssd")" "$(extent_dev 3)"
assert_eq "extent 4 after the restart" "$(majmin "$ssd")" "$(extent_dev 4)"
check "after the interrupted move"
tierd_stop TERM
echo "crash-points: ok"
