#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dmctl (tierd's libdevmapper layer) on the real kernel: a 2-segment linear
# volume created, read back, remapped live, refused and force-removed through
# dmctl, with dmsetup and O_DIRECT reads of the data as the independent view.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

T=$TIERD_BUILD_DIR/tests/kernel/test-dmctl
name=tierd-dmctl
vol=/dev/mapper/$name
vm_modprobe loop dm-mod
a=$(vm_loop_create 8M)
b=$(vm_loop_create 12M)

# check_layout FIRST OFFSET MIB SECOND OFFSET: the volume (/tmp/data) is MIB
# MiB of FIRST from OFFSET MiB, then the rest from SECOND at OFFSET MiB.
check_layout() {
	local first=$(($3 << 20)) rest=$(((12 - $3) << 20))
	vm_drop_caches
	assert_eq "volume contents" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
	assert_eq "first segment, on $1" "$(vm_digest /tmp/data $first)" \
		"$(vm_digest "$1" $first $(($2 << 20)))"
	assert_eq "second segment, on $4" "$(vm_digest /tmp/data $rest $first)" \
		"$(vm_digest "$4" $rest $(($5 << 20)))"
}

step "create $name over $a and $b"
"$T" create $name "$a" "$b"
assert_eq "table as dmsetup reads it" "$(dmsetup table $name)" "$("$T" table $name)"
assert_eq "status as dmsetup reads it" "$(dmsetup status $name)" "$("$T" status $name)"
assert_eq "volume size" $((12 << 20)) "$(blockdev --getsize64 $vol)"
assert_eq "uuid" "TIERD-test-$name" "$(dmsetup info -c --noheadings -o uuid $name)"

step "write 12 MiB through the volume"
vm_random_file /tmp/data $((12 << 20))
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
check_layout "$a" 4 4 "$b" 2

step "swap the segments with load, suspend, resume"
"$T" swap $name "$a" "$b"
assert_eq "table after the swap" "$(dmsetup table $name)" "$("$T" table $name)"
# The data stayed where it was: the volume now starts with b's segment.
( dd if=/tmp/data bs=1M skip=4 status=none; head -c $((4 << 20)) /tmp/data ) >/tmp/swapped
mv /tmp/swapped /tmp/data
check_layout "$b" 2 8 "$a" 4

step "dm-stats messages"
"$T" message $name
assert_eq "region, seen by dmsetup" "0: 0+24576 6144 tierd-test -" \
	"$(dmsetup message $name 0 "@stats_list tierd-test")"

step "tables, names and devices the kernel refuses"
"$T" reject $name "$a"
dmsetup ls
assert_eq "devices left" "$name" "$(dmsetup ls | awk '{ print $1 }')"
check_layout "$b" 2 8 "$a" 4

step "a table of 65,536 targets, loaded again after its status was read"
"$T" big $name "$a" "$b"
check_layout "$b" 2 8 "$a" 4

step "remove while open, then forced"
"$T" busy $name "$a"
dmsetup info $name >/dev/null 2>&1 && fail "$name still exists"
assert_eq "devices left" "No devices found" "$(dmsetup ls)"
echo "dmctl: ok"
