#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A batch that cannot start gives back the destinations reserved for it: with
# tierd out of file descriptors, --verify-moves cannot set up io_uring and a
# move to the SSD fails at once; once tierd has descriptors again, the same
# move finds every SSD extent it found before (a leaked reservation would
# leave it short with ENOSPC until tierd restarts), and the data is intact.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 48M)
E=$((4 << 20))
tierd_start --verify-moves
tierctl_ok pool create tank --hdd "$hdd"
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
# Every SSD extent a move may take: the free ones less the swap reserve.
free=$(pool_field tank '.tiers[] | select(.class == "ssd") | .free_extents')
reserved=$(pool_field tank '[.tiers[] | select(.class == "ssd") | .devices[].reserved_extents] | add')
count=$((free - reserved))
[ "$count" -ge 4 ] || fail "too few SSD extents: $free free, $reserved reserved"

step "tierd has no descriptor left for io_uring: the move to the SSD fails at once"
# One more than it holds: enough to accept tierctl's connection, not for a ring.
nofile=$(($(ls /proc/$TIERD_PID/fd | wc -l) + 1))
prlimit --pid "$TIERD_PID" --nofile=$nofile:$nofile
if "$TIERCTL" extent move tank 0 "$count" --tier ssd >/tmp/move.out 2>&1; then
	cat /tmp/move.out
	fail "a move without io_uring for --verify-moves succeeded"
fi
cat /tmp/move.out
grep -q "needs io_uring" /tmp/move.out || fail "the failure does not say why"
prlimit --pid "$TIERD_PID" --nofile=1024:1024
assert_eq "SSD extents used after the failed start" 0 \
	"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"

step "with descriptors again, the same move finds all $count extents"
tierctl_ok extent move tank 0 "$count" --tier ssd
assert_eq "SSD extents used" "$count" \
	"$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
vm_drop_caches
assert_eq "volume contents" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
tierd_stop TERM
echo "move-start-fails: ok"
