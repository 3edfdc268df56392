#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A dm-stats region over a volume, one area per 1 MiB: direct I/O aimed at
# known areas shows up in exactly those areas' counters, a region with its own
# program_id is private to it, and @stats_print_clear turns reads into deltas
# (what tierd's heat sampling relies on).
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod
dev=$(vm_loop_create 8M)
mm=$(stat -L -c '%t:%T' "$dev")
mm=$((16#${mm%:*})):$((16#${mm#*:}))
echo "0 16384 linear $mm 0" | dmsetup create tierd-st
vol=/dev/mapper/tierd-st

step "create a region of 8 areas with program_id tierd-test"
region=$(dmsetup message tierd-st 0 "@stats_create - /8 tierd-test")
assert_eq "region id" 0 "$region"
assert_eq "@stats_list for our program" "0: 0+16384 2048 tierd-test -" "$(dmsetup message tierd-st 0 "@stats_list tierd-test")"
assert_eq "@stats_list for another program" "" "$(dmsetup message tierd-st 0 "@stats_list dmstats")"

# Counter columns of @stats_print (Documentation/admin-guide/device-mapper/statistics.rst):
# 1 reads, 2 reads merged, 3 sectors read, 4 ms reading, 5 writes, 6 writes merged,
# 7 sectors written, ...
counter() { # counter AREA COLUMN
	dmsetup message tierd-st 0 "@stats_print $region" |
		awk -v a="$1" -v c="$2" 'NR == a + 1 { print $(c + 1) }'
}

step "7 random 4K reads in area 2, 5 writes in area 5"
for off in 0 3 17 40 99 200 255; do
	dd if=$vol of=/dev/null bs=4K count=1 skip=$((2 * 256 + off)) iflag=direct status=none
done
for off in 1 2 3 4 5; do
	dd if=/dev/zero of=$vol bs=4K count=1 seek=$((5 * 256 + off * 7)) oflag=direct status=none
done
dmsetup message tierd-st 0 "@stats_print $region"
assert_eq "area 2 reads" 7 "$(counter 2 1)"
assert_eq "area 2 sectors read" 56 "$(counter 2 3)"
assert_eq "area 5 writes" 5 "$(counter 5 5)"
assert_eq "area 5 sectors written" 40 "$(counter 5 7)"
for a in 0 1 3 4 6 7; do
	assert_eq "area $a reads+writes" 0 "$(($(counter $a 1) + $(counter $a 5)))"
done

step "@stats_print_clear returns the counts once, then zero"
first=$(dmsetup message tierd-st 0 "@stats_print_clear $region" | awk 'NR == 3 { print $2 }')
assert_eq "area 2 reads, first clear" 7 "$first"
assert_eq "area 2 reads after clear" 0 "$(counter 2 1)"

step "a table reload keeps the region"
echo "0 16384 linear $mm 0" | dmsetup reload tierd-st
dmsetup suspend tierd-st
dmsetup resume tierd-st
dd if=$vol of=/dev/null bs=4K count=1 skip=$((7 * 256)) iflag=direct status=none
assert_eq "area 7 reads after reload" 1 "$(counter 7 1)"

dmsetup message tierd-st 0 "@stats_delete $region"
dmsetup remove tierd-st
echo "dm-stats: ok"
