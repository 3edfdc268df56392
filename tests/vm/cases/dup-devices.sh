#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Finding a renamed device by its superblock when others show the same one:
# the disk under a device-mapper device shows the superblock of the device on
# top, which is the one to use; a clone (two devices nothing is built on)
# keeps the pool inactive and says so, rather than picking one.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe loop dm-mod dm-mirror
hdd_raw=$(vm_loop_create 128M) ssd_raw=$(vm_loop_create 64M)
over() { dmsetup create "$1" --table "0 $(blockdev --getsz "$2") linear $2 0"; }
over wl-hdd "$hdd_raw"
over wl-ssd "$ssd_raw"
vol=/dev/mapper/tank
tierd_start
tierctl_ok pool create tank --hdd /dev/mapper/wl-hdd --ssd /dev/mapper/wl-ssd --extent-size 1M
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
want=$(vm_digest /tmp/data)

step "both devices come back under other names, over their disks"
tierd_stop
dmsetup remove tank
dmsetup remove wl-hdd wl-ssd
over wl-hdd2 "$hdd_raw"
over wl-ssd2 "$ssd_raw"
tierd_start
assert_eq "pool state" active "$(pool_field tank .state)"
assert_eq "the volume maps the devices on top" \
	"$(majmin /dev/mapper/wl-hdd2) $(majmin /dev/mapper/wl-ssd2)" \
	"$(dmsetup deps -o devno tank | grep -o '[0-9]*, [0-9]*' | tr -d ' ' | tr , : | sort -t: -k2 -n | xargs)"
vm_drop_caches
assert_eq "volume contents" "$want" "$(vm_digest $vol "$size")"

step "a clone of the HDD appears while its name changes again"
tierd_stop
dmsetup remove tank
dmsetup remove wl-hdd2
clone=$(vm_loop_create 128M)
dd if="$hdd_raw" of="$clone" bs=1M iflag=direct oflag=direct status=none
tierd_start
assert_eq "pool state with a clone" inactive "$(pool_field tank .state)"
pool_field tank .inactive_reason | grep -q "is on both .* (a clone or a snapshot?)" ||
	fail "pool show does not say why: $(pool_field tank .inactive_reason)"
tierctl_fails 1 "is on both" pool activate tank
losetup -d "$clone"
tierctl_ok pool activate tank
vm_drop_caches
assert_eq "volume contents, the clone gone" "$want" "$(vm_digest $vol "$size")"
tierd_stop
