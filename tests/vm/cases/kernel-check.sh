#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `tierd --check-kernel` on the real kernel: it reports the driver version the
# kernel has (opening /dev/mapper/control loads dm-mod, as on a real machine),
# and asking for the mirror target loads dm-mirror on demand.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

grep -q '^dm_mirror ' /proc/modules && fail "dm_mirror loaded before the check"
out=$("$TIERD" --check-kernel)
echo "$out"
driver=$(dmsetup version | awk '/^Driver version:/ { print $3 }')
assert_eq "driver version line" "device-mapper driver $driver" "$(echo "$out" | head -n1 | cut -d, -f1)"
echo "$out" | grep -Eq '^target linear +v[0-9]+\.[0-9]+\.[0-9]+ ' || fail "no linear target line"
echo "$out" | grep -Eq '^target mirror +v[0-9]+\.[0-9]+\.[0-9]+ ' || fail "no mirror target line"
grep -q '^dm_mirror ' /proc/modules || fail "dm_mirror was not loaded by the check"
want=$(dmsetup targets | awk '$1 == "mirror" { print $2 }')
echo "$out" | grep -q "^target mirror *$want " || fail "mirror version differs from dmsetup targets ($want)"

step "without device-mapper"
rmmod dm_mirror dm_region_hash dm_log dm_mod
rm /dev/mapper/control
set +e
err=$("$TIERD" --check-kernel 2>&1)
rc=$?
set -e
assert_eq "exit status without dm" 1 "$rc"
echo "$err" | grep -q 'device-mapper is not available' || fail "unclear message: $err"
echo "kernel-check: ok"
