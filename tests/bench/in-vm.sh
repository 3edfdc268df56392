# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the benchmarks that run in the test VM. On the host,
# bench_in_vm TIMEOUT MEMORY_MIB SCRIPT [ARGS...] boots the VM (tests/vm/vm-run)
# running SCRIPT again in it, and does not return; in the guest it returns,
# and the script goes on with tests/vm/lib.sh.
bench_in_vm() {
	local timeout=$1 memory=$2 script=$3
	shift 3
	[ -n "${TIERD_VM_KERNEL_TREE:-}" ] && return 0
	local here
	here=$(cd "$(dirname "$script")" && pwd)
	export TIERD_SOURCE_DIR=${TIERD_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
	export TIERD_BUILD_DIR=${TIERD_BUILD_DIR:-$TIERD_SOURCE_DIR/build}
	echo "host: $(uptime)"
	exec "$TIERD_SOURCE_DIR/tests/vm/vm-run" --timeout "$timeout" --memory "$memory" -- \
		/bin/bash "$here/$(basename "$script")" "$@"
}
