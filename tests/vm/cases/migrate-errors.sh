#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A move whose destination fails (the SSD's data area turned into the `error`
# target): the move ends cleanly with an error, the extents stay on the HDD,
# the data is intact, and once the SSD works again the same move succeeds.
# The same for pieces, copied while the volume is suspended or through mirrors.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd_loop=$(vm_loop_create 64M)
mm=$(stat -L -c '%t:%T' "$ssd_loop")
mm=$((16#${mm%:*})):$((16#${mm#*:}))
sectors=$((64 << 11))
echo "0 $sectors linear $mm 0" | dmsetup create ssdwrap
ssd=/dev/mapper/ssdwrap
E=$((4 << 20))
tierd_start

tierctl_ok pool create tank --hdd "$hdd"
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
vm_random_file /tmp/data "$(blockdev --getsize64 $vol)"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
table_before=$(dmsetup table tank)

# tierd's metadata area (the first 2 MiB) keeps working; the data area errors.
ssd_fails() {
	dmsetup reload ssdwrap <<-TABLE
	0 4096 linear $mm 0
	4096 $((sectors - 4096)) error
	TABLE
	dmsetup suspend ssdwrap
	dmsetup resume ssdwrap
}
ssd_works() {
	echo "0 $sectors linear $mm 0" | dmsetup reload ssdwrap
	dmsetup suspend ssdwrap
	dmsetup resume ssdwrap
}

step "the SSD's data area fails: the move is refused extent by extent"
ssd_fails
tierctl_fails 1 "could not move" extent move tank 10 2 --tier ssd
assert_eq "table after the failed move" "$table_before" "$(dmsetup table tank)"
assert_eq "SSD extents used" 0 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
grep -q "could not move to" /tmp/tierd.log || fail "the failure is not in tierd's log"
vm_drop_caches
assert_eq "volume contents after the failed move" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"

step "the SSD works again: the same move succeeds"
ssd_works
tierctl_ok extent move tank 10 2 --tier ssd
assert_eq "SSD extents used" 2 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
vm_drop_caches
assert_eq "volume contents after the move" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
assert_eq "extent 10 on the SSD" "$(vm_digest /tmp/data $E $((10 * E)))" \
	"$(vm_digest "$ssd" $E $((2 << 20)))"

# Pieces copy while the volume is suspended (piece-copy held, the default)
# or through mirrors: either way a copy the SSD fails leaves them at home.
for how in held mirror; do
	step "the SSD's data area fails: pieces copied $how stay at home"
	ssd_fails
	table_before=$(dmsetup table tank)
	tierd_stop TERM
	: >/tmp/tierd.log
	tierd_start --piece-copy "$how" --verbose
	tierctl_fails 1 "4 of 4 pieces could not move" extent move tank 20 --tier ssd --pieces 0-3
	grep -q "batch of 4 pieces: " /tmp/tierd.log || fail "the batch's debug lines do not count pieces"
	grep "batch of 4 extents" /tmp/tierd.log && fail "a batch of pieces counted as extents"
	if [ "$how" = held ]; then
		grep -q "copied 4 pieces while suspended in .* ms: 4 failed" /tmp/tierd.log ||
			fail "no failed held copy in tierd's log"
	else
		grep -q "loaded the mirror table" /tmp/tierd.log || fail "no mirror in tierd's log"
	fi
	assert_eq "table after the failed piece move ($how)" "$table_before" "$(dmsetup table tank)"
	assert_eq "pieces out after the failed move ($how)" 0 "$(pool_field tank .pieces.pieces)"
	ssd_works # extents 10 and 11 are on the SSD
	vm_drop_caches
	assert_eq "volume contents after the failed piece move ($how)" "$(vm_digest /tmp/data)" \
		"$(vm_digest $vol)"
done

step "the SSD works again: the pieces move"
tierctl_ok extent move tank 20 --tier ssd --pieces 0-3
assert_eq "pieces out" 4 "$(pool_field tank .pieces.pieces)"
vm_drop_caches
assert_eq "volume contents after the piece move" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
tierd_stop TERM
echo "migrate-errors: ok"
