#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A pool on file-backed virtio disks, its state on a third disk: after a power
# cut the next boot's tierd activates it with the data intact.
# vm-disks: 192M 64M 64M
# vm-boots: 2
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

TIERD_STATE=/mnt/state
case "$TIERD_VM_BOOT" in
1)
	mkfs.ext4 -q /dev/vdc
	mount /dev/vdc /mnt
	tierd_start
	tierctl_ok pool create tank --hdd /dev/vda --ssd /dev/vdb
	size=$(blockdev --getsize64 /dev/mapper/tank)
	vm_random_file /tmp/data "$size"
	dd if=/tmp/data of=/dev/mapper/tank bs=1M oflag=direct status=none
	vm_digest /tmp/data >"$VM_SHARE/want"
	vm_power_cut
	;;
2)
	mount /dev/vdc /mnt
	[ ! -e /dev/mapper/tank ] || fail "the volume exists before tierd starts"
	tierd_start
	assert_eq "state after the power cut" active "$(pool_field tank .state)"
	vm_drop_caches
	assert_eq "volume contents after the power cut" "$(cat "$VM_SHARE/want")" "$(vm_digest /dev/mapper/tank)"
	tierd_stop TERM
	echo "pool-reboot: ok"
	;;
esac
