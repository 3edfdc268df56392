# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for guest tests; sourced by tests/vm/cases/*.sh inside the VM.
# shellcheck shell=bash
set -euo pipefail

: "${TIERD_BUILD_DIR:?TIERD_BUILD_DIR must point at the meson build directory}"
: "${TIERD_SOURCE_DIR:?TIERD_SOURCE_DIR must point at the source tree}"
TIERD=$TIERD_BUILD_DIR/tierd/tierd
TIERCTL=$TIERD_BUILD_DIR/tierctl/tierctl
# Persistent across the boots of one test (it lives on the host).
VM_SHARE=/run/vm

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# The seconds since the case started: where a slow case spends its time.
step() {
	echo "== $* [${SECONDS} s]"
}

# Load kernel modules (and their dependencies) from the unpacked VM kernel.
vm_modprobe() {
	local m
	for m in "$@"; do
		modprobe -d "$TIERD_VM_KERNEL_TREE" "$m" || fail "modprobe $m"
	done
}

# Cut the power now: nothing in the guest's page cache survives, as in a real
# power failure. The next boot of the same test sees the disks as they are.
vm_power_cut() {
	echo "== power cut"
	echo b >/proc/sysrq-trigger
	sleep 30
	fail "power cut did not happen"
}

# vm_plug_late_disk: ask the host to add the case's late disk (vm-late-disk)
# now, as a disk plugged in at run time; prints its /dev/vdX once it is there.
vm_plug_late_disk() {
	local before after i d
	before=$(ls /sys/block)
	touch "$VM_SHARE/.vm/plug"
	for ((i = 0; i < 60; i++)); do
		after=$(ls /sys/block)
		for d in $after; do
			case "$d" in vd*) ;; *) continue ;; esac
			grep -qx "$d" <<<"$before" || { echo "/dev/$d"; return 0; }
		done
		sleep 1
	done
	fail "the late disk did not appear within 60 s"
}

# vm_loop_create SIZE: a loop device over a fresh tmpfs file; prints its path.
vm_loop_create() {
	local size=$1 file
	mkdir -p /tmp/loops
	file=$(mktemp /tmp/loops/img.XXXXXX)
	truncate -s "$size" "$file"
	losetup --find --show "$file"
}

# vm_delay_create NAME DEV: /dev/mapper/NAME, DEV through dm-delay, without
# delay until vm_delay; prints its path.
vm_delay_create() {
	dmsetup create "$1" --table "0 $(blockdev --getsz "$2") delay $2 0 0" && echo "/dev/mapper/$1"
}

# vm_delay NAME MS: from now on every read and write of /dev/mapper/NAME waits MS ms.
vm_delay() {
	dmsetup table "$1" | awk -v ms="$2" '{ print $1, $2, $3, $4, $5, ms }' | dmsetup reload "$1"
	dmsetup suspend "$1"
	dmsetup resume "$1"
}

vm_drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# vm_digest FILE_OR_DEV [BYTES [OFFSET]]: checksum of a range, read with
# O_DIRECT so the answer comes from the device, not the page cache.  MD5:
# the checks look for lost or misplaced data, not for an adversary, and
# under TCG md5sum reads 116 MB/s where sha256sum reads 58.
vm_digest() {
	local src=$1 bytes=${2:-} offset=${3:-0} flags=skip_bytes,count_bytes
	if [ -b "$src" ]; then
		flags=$flags,direct
		[ -n "$bytes" ] || bytes=$(blockdev --getsize64 "$src")
	else
		[ -n "$bytes" ] || bytes=$(stat -c %s "$src")
	fi
	dd if="$src" bs=1M iflag="$flags" skip="$offset" count="$bytes" status=none |
		md5sum | cut -d' ' -f1
}

# vm_read_4k DEV OFFSET COUNT: COUNT reads of the 4 KiB block at byte OFFSET,
# each from the device (O_DIRECT): one block made hot, as dm-stats counts it.
vm_read_4k() {
	local i
	for i in $(seq "$3"); do
		dd if="$1" of=/dev/null bs=4096 count=1 skip=$(($2 / 4096)) iflag=direct status=none
	done
}

# vm_random_file PATH BYTES: fresh random data to write and compare against.
vm_random_file() {
	head -c "$2" /dev/urandom >"$1"
}

# vm_fill_random DEV: DEV filled with fresh random data, also kept in
# /tmp/data; sets size (DEV's bytes) and want (their digest).
vm_fill_random() {
	size=$(blockdev --getsize64 "$1")
	vm_random_file /tmp/data "$size"
	dd if=/tmp/data of="$1" bs=1M oflag=direct status=none
	want=$(vm_digest /tmp/data)
}

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	if [ "$2" != "$3" ]; then
		fail "$1: expected '$2', got '$3'"
	fi
	echo "ok: $1 = $3"
}

# wait_until SECONDS WHAT COMMAND...: run COMMAND every second until it
# succeeds, or fail naming WHAT. For what follows tierd's sample and flush
# timers: a fixed sleep is slow when the guest is quick and too short when
# the host is loaded; the assertion that follows then checks exact values.
wait_until() {
	local seconds=$1 what=$2 i
	shift 2
	for ((i = 0; i < seconds; i++)); do
		"$@" && return 0
		sleep 1
	done
	fail "$what: not within $seconds s"
}

# ---- tierd in the guest --------------------------------------------------

TIERD_STATE=${TIERD_STATE:-/tmp/tierd-state}
export TIERD_SOCKET=/run/tierd/tierd.sock
TIERD_PID=

# majmin DEV: the device's "MAJOR:MINOR", as dmsetup table names it.
majmin() {
	local mm
	mm=$(stat -L -c '%t:%T' "$1")
	echo "$((16#${mm%:*})):$((16#${mm#*:}))"
}

# tierd_start [ARGS...]: start the daemon in the background and wait until it
# answers: 10 s, or TIERD_START_WAIT seconds (a state of huge pools).
tierd_start() {
	"$TIERD" --state-dir "$TIERD_STATE" --socket "$TIERD_SOCKET" \
		--policy-dir "$TIERD_SOURCE_DIR/policies" "$@" 2>>/tmp/tierd.log &
	TIERD_PID=$!
	local i wait=${TIERD_START_WAIT:-10}
	for i in $(seq $((wait * 10))); do
		if "$TIERCTL" pool list >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$TIERD_PID" 2>/dev/null || { cat /tmp/tierd.log >&2; fail "tierd exited at start"; }
		sleep 0.1
	done
	cat /tmp/tierd.log >&2
	fail "tierd did not answer within $wait s"
}

# tierd_stop [SIGNAL]: stop the daemon (TERM by default) and wait for it.
tierd_stop() {
	kill -"${1:-TERM}" "$TIERD_PID"
	wait "$TIERD_PID" 2>/dev/null || true
	TIERD_PID=
}

# tierd_dead: wait for a tierd started with TIERD_FAULT to die at its step.
tierd_dead() {
	local i
	for i in $(seq 100); do
		kill -0 "$TIERD_PID" 2>/dev/null || { wait "$TIERD_PID" 2>/dev/null || true; return 0; }
		sleep 0.1
	done
	fail "tierd did not die at its fault point"
}

# tierctl_ok ARGS...: run tierctl, fail the test if it fails.
tierctl_ok() {
	"$TIERCTL" "$@" || fail "tierctl $* failed"
}

# tierctl_fails EXPECTED_STATUS PATTERN ARGS...: tierctl must fail with that
# status and say something matching PATTERN on stderr.
tierctl_fails() {
	local want=$1 pattern=$2 rc=0 out
	shift 2
	out=$("$TIERCTL" "$@" 2>&1 >/dev/null) || rc=$?
	[ "$rc" = "$want" ] || fail "tierctl $*: status $rc, expected $want ($out)"
	grep -qE -- "$pattern" <<<"$out" || fail "tierctl $*: message '$out' lacks '$pattern'"
	echo "ok: tierctl $* -> $rc: $out"
}

# json_save SCHEMA TIERCTL-ARGS...: `tierctl ARGS --json` succeeds, and its
# document is kept for json_check, which validates every kept one against
# schema/json/SCHEMA.schema.json (docs/protocol.md) in one start of python:
# starting it takes seconds in the guest.
json_saved=()
json_save() {
	local schema=$1 file=/tmp/json-$((${#json_saved[@]} / 2))-$1.json
	shift
	"$TIERCTL" "$@" --json >"$file" || fail "tierctl $* --json: status $?: $(cat "$file")"
	json_saved+=("$schema" "$file")
}

json_check() {
	python3 "$TIERD_SOURCE_DIR/tests/json/check-json" "$TIERD_SOURCE_DIR/schema/json" \
		"${json_saved[@]}" || fail "documents do not match their schemas (above)"
	echo "ok: $((${#json_saved[@]} / 2)) --json documents match their schemas: ${json_saved[*]}"
	json_saved=()
}

# pool_tier_at POOL OFFSET: the tier that holds the volume's byte OFFSET
# (pool.locate, which tierctl asks only for a file's places), piece by piece.
pool_tier_at() {
	/usr/bin/python3 - "$TIERD_SOCKET" "$1" "$2" <<'PY'
import json, socket, sys
path, name, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall((json.dumps({"protocol": 2, "method": "pool.locate",
                       "params": {"name": name, "ranges": [[off, 1]]}}) + "\n").encode())
reply = json.loads(s.makefile().readline())
print(next((r["tier"] for r in reply["result"]["locate"]["runs"]
            if r["offset_bytes"] <= off < r["offset_bytes"] + r["size_bytes"]), "none"))
PY
}

# pool_field POOL JQ-FILTER: one value of the pool object of `tierctl pool show POOL --json`.
pool_field() {
	"$TIERCTL" pool show "$1" --json | jq -r ".pool | $2"
}

# extents_on POOL MAJ:MIN FIRST COUNT EXTENT_BYTES: how many of the extents
# [FIRST, FIRST + COUNT) start in a table line on MAJ:MIN; one read of the
# table, not one per extent (each a second of a case under TCG with two VMs).
extents_on() {
	dmsetup table "$1" | awk -v d="$2" -v first="$3" -v count="$4" -v e="$(($5 / 512))" '
		$4 == d { for (le = first; le < first + count; le++) if ($1 <= le * e && le * e < $1 + $2) n++ }
		END { print n + 0 }'
}

# pool_check_table WHAT POOL HDD SSD: the volume is active, with its live
# table only (a table left loaded by a dead tierd would be swapped in by
# anyone's resume), all linear, covering the volume once; each device's
# physical sectors are mapped once and inside the device; each tier's
# used_extents is what the table maps on it. WHAT names the moment.
pool_check_table() {
	local what=$1 pool=$2 hdd=$3 ssd=$4 table info e d t mm
	table=$(dmsetup table "$pool")
	info=$(dmsetup info "$pool")
	grep -q mirror <<<"$table" && fail "$what: mirror targets left: $table"
	grep -q '^State: *ACTIVE' <<<"$info" || fail "$what: not active: $info"
	grep -q '^Tables present: *LIVE$' <<<"$info" ||
		fail "$what: $(grep '^Tables present' <<<"$info")"
	awk -v end="$(blockdev --getsz "/dev/mapper/$pool")" '
		$3 != "linear" { print "not linear: " $0; bad = 1 }
		$1 != pos { print "gap or overlap at sector " pos ": " $0; bad = 1 }
		{ pos = $1 + $2 }
		END { if (pos != end) { print "the table ends at " pos ", not " end; bad = 1 }; exit bad }
	' <<<"$table" || fail "$what: the table does not cover the volume once"
	awk '{ print $4, $5, $5 + $2 }' <<<"$table" | sort -k1,1 -k2,2n | awk '
		$1 == dev && $2 < last { print "sectors mapped twice on " dev " at " $2; bad = 1 }
		{ dev = $1; last = $3 }
		END { exit bad }
	' || fail "$what: a physical extent is mapped twice: $table"
	e=$(($("$TIERCTL" pool show "$pool" --json | jq .pool.extent_size_bytes) / 512))
	for t in hdd ssd; do
		d=$hdd
		[ $t = ssd ] && d=$ssd
		mm=$(majmin "$d")
		awk -v d="$mm" -v n="$(blockdev --getsz "$d")" '$4 == d && $5 + $2 > n { bad = 1 } END { exit bad }' \
			<<<"$table" || fail "$what: the table maps past the end of $d"
		assert_eq "$what: $t extents used (tierd) vs mapped (table)" \
			"$(pool_field "$pool" ".tiers[] | select(.class == \"$t\") | .used_extents")" \
			"$(awk -v d="$mm" -v e="$e" '$4 == d { n += $2 } END { print n / e }' <<<"$table")"
	done
}
