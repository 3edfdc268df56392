#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Mirrors a failed move had to leave in the table do not hold writes until a
# restart. A move's commit fails on the SSD, and so does writing the old
# mapping back (TIERD_FAULT=fail:metadata-write-dev1): the pool takes no more
# moves, and its mirrors stay while a device may name the SSD copies
# (docs/migration.md, "Mirrors left behind"). Then the SSD's data area fails
# every write, so the mirrors hold each write to the moving extents: such a
# write must end (with EIO) within 30 s and a retry, never wait for a
# restart. After a restart without the fault the table has no mirror, every
# extent is on the HDD and the volume holds what was written.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd_loop=$(vm_loop_create 48M)
mm=$(majmin "$ssd_loop")
sectors=$((48 << 11))
echo "0 $sectors linear $mm 0" | dmsetup create ssdwrap
ssd=/dev/mapper/ssdwrap
hdd_mm=$(majmin "$hdd")
E=$((1 << 20))
FIRST=8 COUNT=4
trap 'rc=$?; [ $rc = 0 ] || { tail -n 40 /tmp/tierd.log; dmsetup table; } >&2' EXIT
tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
tierd_stop TERM

step "the commit and the old mapping's rewrite both fail on the SSD: the mirrors stay"
TIERD_FAULT=fail:metadata-write-dev1 tierd_start
"$TIERCTL" extent move tank $FIRST $COUNT --tier ssd && fail "the move committed despite its fault"
grep -q "no more moves until tierd restarts" /tmp/tierd.log || fail "the pool was not marked broken"
dmsetup table tank | grep -q mirror || fail "no mirror left: nothing for this case to test"
grep -q "left mirrors in the volume's table" /tmp/tierd.log || fail "tierd does not say it left mirrors"

step "the SSD fails every write: a write to a moving extent ends, with EIO, within 90 s"
printf '0 4096 linear %s 0\n4096 %s flakey %s 4096 0 1 1 error_writes\n' \
	"$mm" $((sectors - 4096)) "$mm" | dmsetup reload ssdwrap
dmsetup suspend ssdwrap
dmsetup resume ssdwrap
vm_random_file /tmp/new $E
from=$(date +%s)
( rc=0
  dd if=/tmp/new of=$vol bs=1M seek=$FIRST oflag=direct conv=notrunc status=none || rc=$?
  echo $rc >/tmp/dd.rc ) &
writer=$!
for _ in $(seq 90); do
	[ -e /tmp/dd.rc ] && break
	sleep 1
done
took=$(($(date +%s) - from))
[ -e /tmp/dd.rc ] || fail "a write held by a mirror is still waiting after $took s"
wait $writer
echo "the held write ended after $took s with status $(cat /tmp/dd.rc)"
[ "$(cat /tmp/dd.rc)" != 0 ] || fail "the held write succeeded, although a device may name the SSD"
grep -q "writes a failed leg holds now fail" /tmp/tierd.log || fail "tierd does not say held writes fail"

step "a restart without the fault: no mirror, every extent on the HDD, the data intact"
tierd_stop TERM
printf '0 %s linear %s 0\n' $sectors "$mm" | dmsetup reload ssdwrap
dmsetup suspend ssdwrap
dmsetup resume ssdwrap
tierd_start
assert_eq "pool state" active "$(pool_field tank .state)"
dmsetup table tank | grep -q mirror && fail "mirror targets left after the restart"
dmsetup table tank | awk -v hdd="$hdd_mm" '$4 != hdd { bad = 1 } END { exit bad }' ||
	fail "an extent is not on the HDD: $(dmsetup table tank)"
# The refused write may or may not have reached the HDD: write it once more.
dd if=/tmp/new of=$vol bs=1M seek=$FIRST oflag=direct conv=notrunc status=none
dd if=/tmp/new of=/tmp/data bs=1M seek=$FIRST conv=notrunc status=none
vm_drop_caches
assert_eq "volume contents" "$(vm_digest /tmp/data)" "$(vm_digest $vol)"
tierd_stop TERM
echo "mirrors-left: ok"
