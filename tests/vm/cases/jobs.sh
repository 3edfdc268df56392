#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Jobs followed and stopped from other clients: a rate-limited tiering run
# reported by `job show` (bytes, extents, rate, ETA, waiting for the rate
# limit), followed by `job wait` from a second client and aborted between
# its batches: the run is recorded aborted, what its first batch moved stays
# on the SSD, the rest on the HDD. An extent move held by I/O awareness and a
# detach, each aborted: the SSD stays attached. The data never changes.
# The job's JSON, tierctl's and the socket's (a raw job.wait's progress lines
# and reply), matches schema/json.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

# 1 MiB extents keep the data small: a batch of 16 is 16 MiB.
hdd=$(vm_loop_create 64M)
# The SSD through dm-delay: a delay holds the detach's batches long enough to abort.
ssd=$(vm_delay_create ssddelay "$(vm_loop_create 48M)")
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((1 << 20))
tierd_start
tierctl_ok pool create tank --hdd "$hdd" --extent-size 1M
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
vol=/dev/mapper/tank
size=$(blockdev --getsize64 $vol)
vm_random_file /tmp/data "$size"
dd if=/tmp/data of=$vol bs=1M oflag=direct status=none
check() {
	vm_drop_caches
	assert_eq "volume contents $1" "$(vm_digest /tmp/data)" "$(vm_digest $vol "$size")"
	pool_check_table "$1" tank "$hdd" "$ssd"
}
# on_ssd FIRST COUNT: how many of those extents the table maps on the SSD.
on_ssd() {
	dmsetup table tank | awk -v first=$(($1 * E / 512)) -v end=$((($1 + $2) * E / 512)) \
		-v e=$((E / 512)) -v ssd="$ssd_mm" '
		$4 == ssd {
			lo = $1 > first ? $1 : first
			hi = $1 + $2 < end ? $1 + $2 : end
			if (hi > lo) n += (hi - lo) / e
		}
		END { print n + 0 }'
}
job() { "$TIERCTL" job show tank --json | jq -r ".job | $1"; }

step "no job: job show and job wait say so"
tierctl_fails 1 "pool tank runs no job" job show tank
tierctl_fails 1 "pool tank runs no job" job wait tank

step "a tiering run of 24 pinned extents at 256 KiB/s: job show between its two batches"
tierctl_ok pin tank 0 $((24 * E)) --tier ssd
tierctl_ok schedule set tank --rate 256K --io-awareness off
"$TIERCTL" tier now tank --wait >/tmp/run.out 2>/tmp/run.err &
runner=$!
# A batch is 16 extents; after its 16 MiB the cap holds the next for 64 s.
first_batch_done() {
	[ "$(job '"\(.done_extents) \(.waiting)"' 2>/dev/null)" = "16 rate" ]
}
wait_until 60 "the first batch of the run" first_batch_done
"$TIERCTL" job show tank
"$TIERCTL" job show tank --json >/tmp/job.json
json_saved+=(job /tmp/job.json)
# Its fields are a table's: -o picks one.
assert_eq "job show's rate limit" "256.0 KiB/s" "$("$TIERCTL" job show tank -o rate-limit --noheadings)"
"$TIERCTL" pool show tank | grep "^Running: tiering run 1, 16.0 MiB of 24.0 MiB done" ||
	fail "pool show does not show the run"
j() { jq -r ".job | $1" /tmp/job.json; }
assert_eq "kind" tiering-run "$(j .kind)"
assert_eq "total extents" 24 "$(j .total_extents)"
assert_eq "total bytes" $((24 * E)) "$(j .total_bytes)"
assert_eq "done bytes" $((16 * E)) "$(j .done_bytes)"
assert_eq "moved extents" 16 "$(j .moved_extents)"
assert_eq "rate limit" $((256 << 10)) "$(j .limits.rate_bytes_per_second)"
assert_eq "no batch in flight" null "$(j .extent)"
rate=$(j .rate_bytes_per_second) eta=$(j .eta_seconds) elapsed=$(j .elapsed_seconds)
echo "rate $rate B/s, eta $eta s, elapsed $elapsed s"
# Waits count: 16 MiB in the elapsed time, measured from the start, within a second's rounding.
[ "$rate" -gt 0 ] && [ "$rate" -le $((16 * E / (elapsed > 1 ? elapsed - 1 : 1))) ] &&
	[ "$rate" -ge $((16 * E / (elapsed + 1))) ] || fail "rate $rate for 16 MiB in $elapsed s"
want_eta=$(((8 * E + rate - 1) / rate))
[ "$eta" -ge $((want_eta - 1)) ] && [ "$eta" -le $((want_eta + 1)) ] ||
	fail "eta $eta, expected about $want_eta (8 MiB left at $rate B/s)"
assert_eq "extents on the SSD after one batch" 16 "$(on_ssd 0 24)"

step "job wait from a second client and from the socket, then job abort from a third"
"$TIERCTL" job wait tank >/tmp/wait.out 2>/tmp/wait.err &
waiter=$!
# The socket's own job.wait: its progress lines, then the ended job.
/usr/bin/python3 - "$TIERD_SOCKET" >/tmp/raw-wait.out <<'EOF' &
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall((json.dumps({"protocol": 2, "method": "job.wait", "params": {"name": "tank"}}) +
           "\n").encode())
for line in s.makefile():
    print(line.strip(), flush=True)
    if "progress" not in json.loads(line):
        break
EOF
raw=$!
raw_progress() { [ -s /tmp/raw-wait.out ]; }
wait_until 30 "the socket's job.wait got a progress line" raw_progress
sleep 1
"$TIERCTL" job abort tank --json >/tmp/abort.json || fail "job abort: status $?"
json_saved+=(job /tmp/abort.json)
assert_eq "job abort's result" aborted "$(jq -r .job.result /tmp/abort.json)"
rc=0
wait $runner || rc=$?
assert_eq "tier now --wait status" 3 "$rc"
rc=0
wait $waiter || rc=$?
assert_eq "job wait status" 3 "$rc"
wait $raw || fail "the socket's job.wait failed"
cat /tmp/run.err /tmp/run.out /tmp/wait.err /tmp/wait.out /tmp/raw-wait.out
head -n 1 /tmp/raw-wait.out >/tmp/raw-progress.json
tail -n 1 /tmp/raw-wait.out | jq '{schema_version: 1} + .result' >/tmp/raw-reply.json
json_saved+=(progress /tmp/raw-progress.json job /tmp/raw-reply.json)
assert_eq "the socket's job.wait reply" "true aborted" \
	"$(tail -n 1 /tmp/raw-wait.out | jq -r '"\(.ok) \(.result.job.result)"')"
grep -q "aborted" /tmp/wait.out || fail "job wait did not say the job was aborted"
# Not a terminal: plain progress lines with bytes and extents; none gives time left at the end.
grep -qE "^16.0 MiB/24.0 MiB  16/24 extents" /tmp/wait.err || fail "no plain progress line from job wait"
grep -qE "[0-9] [KMG]?i?B/s" /tmp/run.err || fail "tier now --wait showed no rate"
grep -q ETA <(tail -n 1 /tmp/run.err) && fail "the last progress line of the run gives time left"
tierctl_fails 1 "pool tank runs no job" job show tank
run=$("$TIERCTL" runs tank --json | jq -c '.runs[0]')
echo "$run"
assert_eq "run result" aborted "$(jq -r .result <<<"$run")"
assert_eq "run promoted" 16 "$(jq -r .promoted_extents <<<"$run")"
assert_eq "extents on the SSD after the abort" 16 "$(on_ssd 0 24)"
assert_eq "SSD extents used" 16 "$(pool_field tank '.tiers[] | select(.class == "ssd") | .used_extents')"
check "after the aborted run"
json_check
tierctl_ok schedule set tank --rate 0

step "an extent move held by I/O awareness idle, aborted while it waits"
# Two readers without a pause: the volume is never idle for a second, even
# when a loaded host leaves one of them unscheduled for a while.
readers=()
for r in 1 2; do
	(while :; do dd if=$vol of=/dev/null bs=4k iflag=direct status=none; done) &
	readers+=($!)
done
"$TIERCTL" extent move tank 28 4 --tier ssd --io-awareness idle >/tmp/move.out 2>&1 &
mover=$!
waits_idle() {
	"$TIERCTL" job show tank --json >/tmp/move-job.json 2>/dev/null &&
		[ "$(jq -r .job.waiting /tmp/move-job.json)" = idle ]
}
wait_until 30 "the move waiting for an idle volume" waits_idle
# At once: every program run here gives the volume a moment to look idle.
tierctl_ok job abort tank
assert_eq "move kind" extent-move "$(jq -r .job.kind /tmp/move-job.json)"
assert_eq "move io awareness" idle "$(jq -r .job.limits.io_awareness /tmp/move-job.json)"
rc=0
wait $mover || rc=$?
kill "${readers[@]}"
wait "${readers[@]}" 2>/dev/null || true
cat /tmp/move.out
assert_eq "extent move status" 3 "$rc"
grep -q "aborted on request" /tmp/move.out || fail "the move's message does not say it was aborted"
assert_eq "extents 28-31 on the SSD" 0 "$(on_ssd 28 4)"
pool_check_table "after the aborted move" tank "$hdd" "$ssd"

step "a detach of 24 extents (two batches), aborted: the SSD stays attached"
tierctl_ok extent move tank 24 8 --tier ssd
assert_eq "extents on the SSD before the detach" 24 "$(on_ssd 0 40)"
# Each I/O of the SSD waits 300 ms, so that the first batch is still in
# flight when the abort lands, however slow the host is.
vm_delay ssddelay 300
"$TIERCTL" tier detach tank --ssd "$ssd" >/tmp/detach.out 2>&1 &
detacher=$!
aborted=0
for ((i = 0; i < 300; i++)); do
	if "$TIERCTL" job abort tank 2>/tmp/abort.err; then
		aborted=1
		break
	fi
	kill -0 $detacher 2>/dev/null || break
	sleep 0.1
done
vm_delay ssddelay 0
rc=0
wait $detacher || rc=$?
[ $aborted = 1 ] || fail "the detach could not be aborted: $(cat /tmp/abort.err /tmp/detach.out)"
cat /tmp/detach.out
assert_eq "detach status" 3 "$rc"
grep -q "stays attached" /tmp/detach.out || fail "the detach's message does not say the SSD stays"
assert_eq "tiers after the aborted detach" 2 "$(pool_field tank '.tiers | length')"
left=$(on_ssd 0 40)
echo "$left extents still on the SSD"
[ "$left" -lt 24 ] || fail "$left extents on the SSD: the detach moved none"
check "after the aborted detach"

step "the detach again, to the end"
tierctl_ok tier detach tank --ssd "$ssd"
assert_eq "tiers after the detach" 1 "$(pool_field tank '.tiers | length')"
grep -c "abort requested" /tmp/tierd.log
tierd_stop TERM
