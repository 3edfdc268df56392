#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The harness itself: a file-backed virtio disk keeps what reached it across a
# power cut, and the shared folder carries results from one boot to the next.
# vm-disks: 64M
# vm-boots: 2
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

case "$TIERD_VM_BOOT" in
1)
	[ -b /dev/vda ] || fail "no /dev/vda"
	vm_random_file /tmp/data $((32 << 20))
	dd if=/tmp/data of=/dev/vda bs=1M oflag=direct,sync status=none
	vm_digest /tmp/data >"$VM_SHARE/want"
	vm_power_cut
	;;
2)
	want=$(cat "$VM_SHARE/want")
	assert_eq "disk contents after the power cut" "$want" "$(vm_digest /dev/vda $((32 << 20)))"
	echo "power-cut: ok"
	;;
esac
