#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A dm linear volume concatenating two loop devices: data written through the
# volume reads back identical, and each byte sits on the device and offset the
# table says.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod
a=$(vm_loop_create 24M)
b=$(vm_loop_create 40M)
a_mm=$(stat -L -c '%t:%T' "$a") b_mm=$(stat -L -c '%t:%T' "$b")
a_mm=$((16#${a_mm%:*})):$((16#${a_mm#*:})) b_mm=$((16#${b_mm%:*})):$((16#${b_mm#*:}))

# 16 MiB from a (starting 8 MiB in), then 32 MiB from b (starting 4 MiB in).
step "create the volume over $a and $b"
dmsetup create tierd-lin <<TABLE
0 32768 linear $a_mm 16384
32768 65536 linear $b_mm 8192
TABLE
vol=/dev/mapper/tierd-lin
assert_eq "volume size" $((48 << 20)) "$(blockdev --getsize64 $vol)"

step "write 48 MiB of random data"
vm_random_file /tmp/data $((48 << 20))
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
vm_drop_caches
assert_eq "volume contents" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
assert_eq "first segment on $a" "$(vm_digest /tmp/data $((16 << 20)))" "$(vm_digest "$a" $((16 << 20)) $((8 << 20)))"
dd if=/tmp/data of=/tmp/tail bs=1M skip=16 status=none
assert_eq "second segment on $b" "$(vm_digest /tmp/tail)" "$(vm_digest "$b" $((32 << 20)) $((4 << 20)))"

step "swap the segments' order with a live table reload"
dmsetup reload tierd-lin <<TABLE
0 65536 linear $b_mm 8192
65536 32768 linear $a_mm 16384
TABLE
dmsetup suspend tierd-lin
dmsetup resume tierd-lin
( cat /tmp/tail; head -c $((16 << 20)) /tmp/data ) >/tmp/swapped
assert_eq "contents after reload" "$(vm_digest /tmp/swapped)" "$(vm_digest $vol)"
dmsetup table tierd-lin

dmsetup remove tierd-lin
[ ! -e $vol ] || fail "$vol still exists after remove"
echo "dm-linear: ok"
