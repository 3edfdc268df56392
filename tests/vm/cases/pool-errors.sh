#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input to `pool create` and `tier attach`: a non-zero exit, a message
# naming the device and the reason, and not one byte changed on any device.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

vm_modprobe raid1
hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
tiny=$(vm_loop_create 8M)
ext4=$(vm_loop_create 64M)
raid_a=$(vm_loop_create 32M)
raid_b=$(vm_loop_create 32M)
busy=$(vm_loop_create 32M)
lvm=$(vm_loop_create 64M)
file=/tmp/loops/not-a-device
truncate -s 64M "$file"
# A 4096-byte-sector device beside 512-byte ones.
truncate -s 64M /tmp/loops/big-sector.img
big_sector=$(losetup --find --show --sector-size 4096 /tmp/loops/big-sector.img)

mkfs.ext4 -q "$ext4"
mdadm --create /dev/md9 --run --quiet --level=1 --raid-devices=2 --metadata=1.2 \
	--assume-clean "$raid_a" "$raid_b"
mdadm --stop /dev/md9 >/dev/null
# No udev in the guest: LVM must neither wait for it nor ask it for devices.
pvcreate -q --config 'devices { obtain_device_list_from_udev = 0 } activation { udev_sync = 0 udev_rules = 0 }' "$lvm"
mm=$(stat -L -c '%t:%T' "$busy")
echo "0 65536 linear $((16#${mm%:*})):$((16#${mm#*:})) 0" | dmsetup create holder

devices=("$hdd" "$ssd" "$tiny" "$ext4" "$raid_a" "$busy" "$big_sector" "$lvm")
sums() {
	local d
	for d in "${devices[@]}"; do
		printf '%s %s\n' "$d" "$(vm_digest "$d")"
	done
}
before=$(sums)
tierd_start

step "pool create with bad input"
tierctl_fails 1 "/dev/nonexistent: no such device" pool create p --hdd /dev/nonexistent
tierctl_fails 1 "$file: not a block device" pool create p --hdd "$file"
tierctl_fails 1 "$tiny is too small \(8.0 MiB\).*needs at least" pool create p --hdd "$tiny"
tierctl_fails 1 "$ext4 has a ext4 signature; use --wipe-signatures" pool create p --hdd "$ext4"
tierctl_fails 1 "$raid_a has a linux_raid_member signature" pool create p --hdd "$raid_a"
tierctl_fails 1 "$lvm has a LVM2_member signature" pool create p --hdd "$lvm"
tierctl_fails 1 "$busy is in use \(held by dm-" pool create p --hdd "$busy"
tierctl_fails 2 "logical block sizes differ: $hdd has 512 bytes, $big_sector 4096" \
	pool create p --hdd "$hdd" --ssd "$big_sector"
tierctl_fails 2 "$hdd and $hdd are the same device" pool create p --hdd "$hdd" --ssd "$hdd"
tierctl_fails 2 "extent size" pool create p --hdd "$hdd" --extent-size 3M
tierctl_fails 2 "extent size" pool create p --hdd "$hdd" --extent-size 512K
tierctl_fails 2 "extent size" pool create p --hdd "$hdd" --extent-size 2G
tierctl_fails 2 "invalid pool name" pool create 'bad/name' --hdd "$hdd"
tierctl_fails 2 "invalid pool name" pool create '.hidden' --hdd "$hdd"
tierctl_fails 1 "a device-mapper device named holder already exists" pool create holder --hdd "$hdd"
assert_eq "pools after bad creates" 0 "$("$TIERCTL" pool list --json | jq '.pools | length')"

step "a device already in a pool"
tierctl_ok pool create tank --hdd "$hdd"
devices=("$ssd" "$tiny" "$ext4" "$raid_a" "$busy" "$big_sector" "$lvm")
before=$(sums)
tierctl_fails 1 "$hdd already belongs to pool tank" pool create other --hdd "$hdd"
tierctl_fails 1 "$hdd already belongs to pool tank" pool create other --hdd "$ssd" --ssd "$hdd"
tierctl_fails 1 "a pool named tank already exists" pool create tank --hdd "$ssd"

step "tier attach with bad input"
tierctl_fails 1 "no pool named nope" tier attach nope --ssd "$ssd"
tierctl_fails 1 "$ext4 has a ext4 signature" tier attach tank --ssd "$ext4"
tierctl_fails 1 "$busy is in use" tier attach tank --ssd "$busy"
tierctl_fails 2 "logical block sizes differ" tier attach tank --ssd "$big_sector"
tierctl_fails 1 "$hdd already belongs to pool tank" tier attach tank --ssd "$hdd"
tierctl_fails 1 "$tiny is too small" tier attach tank --ssd "$tiny"

step "no device changed"
assert_eq "device checksums" "$before" "$(sums)"

step "--wipe-signatures overwrites a filesystem signature"
tierctl_ok pool create withforce --hdd "$ext4" --wipe-signatures
assert_eq "magic after --wipe-signatures" TIERDSB1 "$(dd if="$ext4" bs=4096 count=1 iflag=direct status=none | head -c 8)"
tierd_stop TERM
echo "pool-errors: ok"
