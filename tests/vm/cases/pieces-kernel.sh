#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tables of split extents on the real kernel: pieces of 16 KiB moved to
# slots of an SSD container by one mirror target each (region 16 KiB: the
# piece), then the table with the pieces out, then half of them home and
# half to other slots. After each round the volume reads back what was
# written, and every piece's bytes are in its slot on the SSD. Writes made
# through the volume while the mirrors stand reach the pieces' new places.
# The tables are what lib/dmtable.c builds from lib/piecemap.c
# (tests/kernel/test-pieces.c prints them); the daemon does not use them yet.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

T=$TIERD_BUILD_DIR/tests/kernel/test-pieces
name=tierd-pieces
vol=/dev/mapper/$name
vm_modprobe loop dm-mod dm-mirror
hdd=$(vm_loop_create 32M)
ssd=$(vm_loop_create 8M)
hmm=$(majmin "$hdd") smm=$(majmin "$ssd")
P=16384

table() {
	"$T" "$hmm" "$smm" "$1" >/tmp/table-$1 || fail "test-pieces $1 failed"
}

# swap STEP: load the table STEP into the volume and make it live.
swap() {
	table "$1"
	dmsetup load $name /tmp/table-$1
	dmsetup suspend $name
	dmsetup resume $name
	assert_eq "table after $1" "$(cat /tmp/table-$1)" "$(dmsetup table $name)"
}

# synced: every mirror target of the volume copied, both legs alive.
synced() {
	dmsetup status $name | awk '$3 == "mirror" { split($7, r, "/"); if (r[1] != r[2] || $9 !~ /^A+$/) bad++ } END { exit bad > 0 }'
}

# check_pieces ROUND: the volume is /tmp/data, and each piece out is on the SSD.
check_pieces() {
	local le idx at n=0
	vm_drop_caches
	assert_eq "volume after round $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
	"$T" "$hmm" "$smm" pieces$1 >/tmp/pieces$1 || fail "test-pieces pieces$1 failed"
	while read -r le idx at; do
		[ "$(vm_digest /tmp/data $P $((le * 1048576 + idx * P)))" = \
		  "$(vm_digest "$ssd" $P "$at")" ] || fail "round $1: piece $idx of extent $le is not at SSD byte $at"
		n=$((n + 1))
	done </tmp/pieces$1
	echo "ok: round $1: the $n pieces out are in their slots"
}

step "a volume of 16 extents on the HDD"
vm_random_file /tmp/data $((16 << 20))
dd if=/tmp/data of="$hdd" bs=1M oflag=direct status=none
table plain
dmsetup create $name /tmp/table-plain
dmsetup mknodes $name
assert_eq "volume as written" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"

step "round 1: 27 pieces to SSD slots through one mirror each"
swap moving1
assert_eq "mirror targets in round 1" 27 "$(dmsetup table $name | grep -c ' mirror ')"
wait_until 60 "the pieces' mirrors in sync" synced
# A write through the volume into a moving piece (le 0, piece 0: the first mirror).
vm_random_file /tmp/new 4096
dd if=/tmp/new of=$vol bs=4096 seek=2 oflag=direct status=none
dd if=/tmp/new of=/tmp/data bs=4096 seek=2 conv=notrunc status=none
swap split1
# The run of 3 pieces of extent 5 in 3 slots in a row is one target.
assert_eq "targets after round 1" "$(($(wc -l </tmp/table-moving1) - 2))" "$(dmsetup table $name | wc -l)"
check_pieces 1

step "round 2: half the pieces home, half to other slots"
swap moving2
wait_until 60 "the pieces' mirrors in sync" synced
swap split2
check_pieces 2
assert_eq "pieces out after round 2" 13 "$(wc -l </tmp/pieces2)"
# What is not out is on the HDD, at home.
assert_eq "sectors the HDD serves after round 2" \
	"$(dmsetup table $name | awk '$4 == "'"$hmm"'" { n += $2 } END { print n }')" \
	"$(((16 * 2048) - 13 * 32))"

dmsetup remove $name
echo "pieces-kernel: ok"
