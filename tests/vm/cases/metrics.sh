#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tierd --metrics-listen: off by default (no TCP port at all); on, GET /metrics
# answers the Prometheus text format, every line of which parses, every family
# with HELP and TYPE; the values agree with what moved, with `dmsetup table`
# and with the I/O done, counters only grow (across flushes and a restart);
# pool_info names the volume's real /sys/block/dm-N, the last and next runs and a
# job's progress show; / is an index page; other paths get 404, other methods 405, and garbage, oversized requests,
# clients that say nothing and a connection storm leave the server serving.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
hdd_mm=$(majmin "$hdd") ssd_mm=$(majmin "$ssd")
E=$((4 << 20))
PORT=9477
URL=http://127.0.0.1:$PORT
vol=/dev/mapper/tank
# The guest's own python: the host's pyenv shims need the host's environment.
python=/usr/bin/python3
command -v curl >/dev/null || skip "curl is missing"

# The TCP sockets tierd listens on, as "address:port" in /proc/net's hex.
tierd_listeners() {
	local inodes
	inodes=$(find /proc/"$TIERD_PID"/fd -lname 'socket:*' -printf '%l\n' 2>/dev/null |
		sed 's/socket:\[\(.*\)\]/\1/' | tr '\n' ' ')
	awk -v inodes=" $inodes" 'FNR > 1 && $4 == "0A" && index(inodes, " " $10 " ") { print $2 }' \
		/proc/net/tcp /proc/net/tcp6
}

# scrape [FILE]: fetch /metrics into FILE (default /tmp/metrics.txt) and check its syntax.
scrape() {
	local out=${1:-/tmp/metrics.txt}
	curl -sSf -o "$out" -D /tmp/metrics.head "$URL/metrics" || fail "GET /metrics failed"
	grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' /tmp/metrics.head ||
		fail "content type: $(cat /tmp/metrics.head)"
	$python /tmp/metrics-check.py "$out" || fail "the exposition does not parse"
}

# metric SAMPLE [FILE]: the value of one sample (name and labels exactly as served).
metric() {
	awk -v key="$1" 'index($0, key " ") == 1 { print substr($0, length(key) + 2); found = 1 }
		END { exit !found }' "${2:-/tmp/metrics.txt}" || fail "no sample $1"
}

mapped_extents() {
	dmsetup table tank | awk -v d="$1" -v e=$((E / 512)) '$4 == d { n += $2 / e } END { print n + 0 }'
}

reads() {
	fio --name=r --filename=$vol --direct=1 --rw=randread --bs=4k --offset=$(($1 * E)) \
		--size=$((3 * E)) --number_ios=400 --randrepeat=0 --output=/dev/null ||
		fail "fio reads"
}

cat >/tmp/metrics-check.py <<'PY'
# Every line of a text exposition (version 0.0.4) parses; every sample's family
# has HELP and TYPE before it, once; counters end in _total; no duplicate series.
import re, sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(rf"^({NAME})(\{{(?:{LABEL}(?:,{LABEL})*)?\}})? (\S+)$")
helps, types, seen, errors = {}, {}, set(), []
text = open(sys.argv[1], encoding="utf-8").read()
if not text.endswith("\n"):
    errors.append("no newline at the end")
for n, line in enumerate(text.splitlines(), 1):
    m = re.match(rf"^# (HELP|TYPE) ({NAME}) (.*)$", line)
    if m:
        kind, name, rest = m.groups()
        table = helps if kind == "HELP" else types
        if name in table:
            errors.append(f"{n}: second {kind} for {name}")
        if kind == "TYPE" and rest not in ("counter", "gauge"):
            errors.append(f"{n}: type {rest}")
        if kind == "TYPE" and (rest == "counter") != name.endswith("_total"):
            errors.append(f"{n}: {name} is a {rest}")
        table[name] = rest
        continue
    m = SAMPLE.match(line)
    if not m:
        errors.append(f"{n}: does not parse: {line!r}")
        continue
    name, labels, value = m.groups()
    if name not in helps or name not in types:
        errors.append(f"{n}: {name} has no HELP or TYPE before it")
    if (name, labels) in seen:
        errors.append(f"{n}: {name}{labels} twice")
    seen.add((name, labels))
    try:
        float(value)
    except ValueError:
        errors.append(f"{n}: value {value!r}")
for e in errors:
    print(f"metrics: {e}", file=sys.stderr)
sys.exit(1 if errors else 0)
PY

step "without --metrics-listen tierd listens on no TCP port"
tierd_start --sample-interval 1
assert_eq "TCP listeners of tierd" "" "$(tierd_listeners)"
curl -s -o /dev/null "$URL/metrics" && fail "something answers on port $PORT"
tierd_stop TERM

step "--metrics-listen takes IP literals only"
rc=0
"$TIERD" --metrics-listen localhost:$PORT 2>/dev/null || rc=$?
assert_eq "status for a host name" 2 "$rc"

step "with --metrics-listen 127.0.0.1:$PORT"
tierd_start --sample-interval 1 --flush-interval 2 --metrics-listen 127.0.0.1:$PORT
assert_eq "TCP listeners of tierd" "0100007F:$(printf %04X $PORT)" "$(tierd_listeners)"
scrape
assert_eq "build info" 1 "$(metric "tierd_build_info{version=\"$("$TIERD" --version | cut -d' ' -f2)\"}")"
grep -q 'pool="' /tmp/metrics.txt && fail "a pool's series before any pool"

tierctl_ok pool create tank --hdd "$hdd"
scrape
assert_eq "pool_info without an SSD" 1 "$(grep -c '^tierd_pool_info{pool="tank",.*,device="dm-[0-9]*"} 1$' /tmp/metrics.txt)"
tierctl_ok tier attach tank --ssd "$ssd" --no-grow
tierctl_ok extent move tank 2 3 --tier ssd

step "values after a move"
scrape
cat /tmp/metrics.txt
assert_eq "promoted extents" 3 "$(metric 'tierd_migrated_extents_total{pool="tank",direction="promote"}')"
assert_eq "promoted bytes" $((3 * E)) "$(metric 'tierd_migrated_bytes_total{pool="tank",direction="promote"}')"
assert_eq "demoted extents" 0 "$(metric 'tierd_migrated_extents_total{pool="tank",direction="demote"}')"
assert_eq "failures" 0 "$(metric 'tierd_migration_failures_total{pool="tank"}')"
assert_eq "SSD used extents" "$(mapped_extents "$ssd_mm")" "$(metric 'tierd_tier_used_extents{pool="tank",tier="ssd"}')"
assert_eq "HDD used extents" "$(mapped_extents "$hdd_mm")" "$(metric 'tierd_tier_used_extents{pool="tank",tier="hdd"}')"
assert_eq "SSD extents" "$(pool_field tank '.tiers[] | select(.class == "ssd") | .total_extents')" \
	"$(metric 'tierd_tier_extents{pool="tank",tier="ssd"}')"
assert_eq "SSD size" "$(pool_field tank '.tiers[] | select(.class == "ssd") | .size_bytes')" \
	"$(metric 'tierd_tier_size_bytes{pool="tank",tier="ssd"}')"
assert_eq "volume size" "$(blockdev --getsize64 $vol)" "$(metric 'tierd_pool_size_bytes{pool="tank"}')"
assert_eq "active" 1 "$(metric 'tierd_pool_active{pool="tank"}')"
assert_eq "migrating" 0 "$(metric 'tierd_pool_migrating{pool="tank"}')"
assert_eq "paused" 0 "$(metric 'tierd_pool_tiering_paused{pool="tank"}')"
assert_eq "heat kernel bytes" "$(pool_field tank .heat.kernel_bytes)" "$(metric 'tierd_heat_kernel_bytes{pool="tank"}')"
[ "$(metric 'tierd_heat_kernel_bytes{pool="tank"}')" -gt 0 ] || fail "heat is off"
assert_eq "heat enabled" 1 "$(metric 'tierd_heat_enabled{pool="tank"}')"
assert_eq "table targets" "$(dmsetup table tank | wc -l)" "$(metric 'tierd_table_targets{pool="tank"}')"
assert_eq "table targets limit" 65536 "$(metric 'tierd_table_targets_max{pool="tank"}')"
grep -q '^tierd_last_run_' /tmp/metrics.txt && fail "a last run before any run"
grep -q '^tierd_job_' /tmp/metrics.txt && fail "job progress while no job runs"

step "pool_info names the kernel's device, as node_exporter does"
# The volume's own sysfs entry, found by its device number: what node_exporter reads.
dev=$(basename "$(readlink -f "/sys/dev/block/$(majmin $vol)")")
[ -e "/sys/block/$dev" ] || fail "no /sys/block/$dev for $vol"
assert_eq "the dm name of /sys/block/$dev" tank "$(cat "/sys/block/$dev/dm/name")"
info=$(grep '^tierd_pool_info{' /tmp/metrics.txt)
echo "$info"
assert_eq "pool_info" "tierd_pool_info{pool=\"tank\",uuid=\"$(pool_field tank .uuid)\",dm_name=\"tank\",device=\"$dev\"} 1" "$info"
assert_eq "runs" 0 "$(metric 'tierd_runs_total{pool="tank",trigger="on-demand",result="done"}')"

step "read counters follow the I/O, across flushes"
ssd_reads='tierd_pool_io_reads_total{pool="tank",tier="ssd"}'
# ssd_reads_reach N: scrape; true once the SSD's read counter is N or more.
ssd_reads_reach() { scrape && [ "$(metric "$ssd_reads")" -ge "$1" ]; }
before=$(metric "$ssd_reads")
reads 2
wait_until 30 "the reads in the counter" ssd_reads_reach $((before + 400))
first=$(metric "$ssd_reads")
echo "SSD reads $before -> $first"
[ "$(metric 'tierd_pool_io_read_bytes_total{pool="tank",tier="ssd"}')" -ge $((400 * 4096)) ] ||
	fail "SSD read bytes below 400 reads of 4 KiB"
reads 2
wait_until 30 "the reads in the counter" ssd_reads_reach $((first + 400))
second=$(metric "$ssd_reads")
echo "SSD reads $first -> $second"
# Flushes every 2 s move the counts from memory to the state: never down.
last=$second
for _ in $(seq 6); do
	sleep 1
	scrape /tmp/metrics.again
	now=$(metric "$ssd_reads" /tmp/metrics.again)
	[ "$now" -ge "$last" ] || fail "SSD reads went down from $last to $now"
	last=$now
done
echo "ok: SSD reads never went down ($last)"

step "a tiering run and a pause"
tierctl_ok tier now tank --wait
scrape
n=$(awk '/^tierd_runs_total\{pool="tank",trigger="on-demand",/ { n += $2 } END { print n + 0 }' /tmp/metrics.txt)
assert_eq "on-demand runs" 1 "$n"
result=$("$TIERCTL" runs tank --json | jq -r '.runs[0].result')
assert_eq "the run's series" 1 "$(metric "tierd_runs_total{pool=\"tank\",trigger=\"on-demand\",result=\"$result\"}")"
assert_eq "promoted by the move and the run" \
	"$("$TIERCTL" stats tank --json | jq .stats.migration.promoted_extents)" \
	"$(metric 'tierd_migrated_extents_total{pool="tank",direction="promote"}')"
run_json=$("$TIERCTL" runs tank --json | jq '.runs[0]')
started=$(date -d "$(jq -r .started_at <<<"$run_json")" +%s) || fail "the run's start"
echo "last run: $run_json"
start=$(metric 'tierd_last_run_start_timestamp_seconds{pool="tank"}')
end=$(metric 'tierd_last_run_end_timestamp_seconds{pool="tank"}')
assert_eq "last run start" "$started" "$start"
[ "$end" -ge "$start" ] && [ "$end" -le "$(date +%s)" ] || fail "last run ended at $end (started $start)"
assert_eq "last run duration" $((end - start)) "$(metric 'tierd_last_run_duration_seconds{pool="tank"}')"
assert_eq "last run result" 1 "$(metric "tierd_last_run_result{pool=\"tank\",result=\"$result\"}")"
assert_eq "last run results at 1" 1 "$(awk '/^tierd_last_run_result\{pool="tank",/ { n += $2 } END { print n + 0 }' /tmp/metrics.txt)"
grep -q '^tierd_next_run_timestamp_seconds{pool="tank"}' /tmp/metrics.txt && fail "a next run while manual"

step "next run of a schedule"
tierctl_ok schedule set tank every 1h
scrape
next=$(metric 'tierd_next_run_timestamp_seconds{pool="tank"}')
now=$(date +%s)
[ "$next" -gt "$now" ] && [ "$next" -le $((now + 3600)) ] || fail "next run at $next, now $now"
tierctl_ok schedule set tank manual

step "job progress in bytes, while a move waits for a quiet volume"
# Two readers without a pause: one fio started two seconds early was not
# enough on a loaded host, which left it unscheduled long enough for the
# volume to look idle, and the move ran and ended before the first scrape.
readers=()
for r in 1 2; do
	(while :; do dd if=$vol of=/dev/null bs=4k count=2048 iflag=direct status=none; done) &
	readers+=($!)
done
"$TIERCTL" extent move tank 9 2 --tier ssd --io-awareness idle >/tmp/move.out 2>&1 &
move_pid=$!
waits_idle() {
	kill -0 "$move_pid" 2>/dev/null || fail "the move ended without waiting: $(cat /tmp/move.out)"
	"$TIERCTL" job show tank --json >/tmp/move-job.json 2>/dev/null &&
		[ "$(jq -r .job.waiting /tmp/move-job.json)" = idle ]
}
wait_until 30 "the move waiting for an idle volume" waits_idle
job_shows() { scrape && grep -q '^tierd_job_total_bytes{pool="tank"}' /tmp/metrics.txt; }
wait_until 20 "the job in the metrics" job_shows
assert_eq "job total" $((2 * E)) "$(metric 'tierd_job_total_bytes{pool="tank"}')"
assert_eq "job done while it waits" 0 "$(metric 'tierd_job_done_bytes{pool="tank"}')"
assert_eq "migrating" 1 "$(metric 'tierd_pool_migrating{pool="tank"}')"
kill "${readers[@]}"
wait "${readers[@]}" 2>/dev/null || true
wait "$move_pid" || fail "the move failed: $(cat /tmp/move.out)"
scrape
grep -q '^tierd_job_' /tmp/metrics.txt && fail "job progress after the job"
echo "ok: the job's bytes showed while it ran"

tierctl_ok tier pause tank
scrape
assert_eq "paused" 1 "$(metric 'tierd_pool_tiering_paused{pool="tank"}')"
tierctl_ok tier resume tank

step "paths, methods, garbage"
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
assert_eq "GET /nope" 404 "$(code "$URL/nope")"
assert_eq "GET /" 200 "$(code "$URL/")"
curl -sSf -D /tmp/index.head -o /tmp/index.html "$URL/" || fail "GET /"
grep -qi '^content-type: text/html; charset=utf-8' /tmp/index.head || fail "index: $(cat /tmp/index.head)"
grep -q '<a href="/metrics">' /tmp/index.html || fail "the index links no /metrics: $(cat /tmp/index.html)"
assert_eq "HEAD /" 200 "$(code -I "$URL/")"
assert_eq "POST /" 405 "$(code -X POST -d x "$URL/")"
assert_eq "POST /metrics" 405 "$(code -X POST -d x "$URL/metrics")"
assert_eq "HEAD /metrics" 200 "$(code -I "$URL/metrics")"
assert_eq "GET /metrics?x=1" 200 "$(code "$URL/metrics?x=1")"
assert_eq "an 8 KiB header" 431 "$(code -H "X-Big: $(head -c 9000 /dev/zero | tr '\0' a)" "$URL/metrics")"
cat >/tmp/metrics-abuse.py <<'PY'
# Raw requests curl will not send; run by tests/vm/cases/metrics.sh.
import socket, sys, time

port = int(sys.argv[1])


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def exchange(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    out = b""
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        if not b:
            break
        out += b
    s.close()
    return out


def expect(what, data, status):
    r = exchange(data)
    if not r.startswith(b"HTTP/1.1 %d " % status):
        fail(f"{what}: {r[:120]!r}, expected {status}")
    print(f"ok: {what}: {status}", flush=True)


expect("binary garbage", bytes(range(256)) + b"\r\n\r\n", 400)
expect("no version", b"GET /metrics\r\n\r\n", 400)
expect("HTTP/2.0", b"GET /metrics HTTP/2.0\r\n\r\n", 505)
expect("cut short", b"GET /metrics HTTP/1.1\r\nHost: x\r\n", 400)
expect("1 MiB without a line end", b"G" * (1 << 20), 431)
expect("bare LF", b"GET /metrics HTTP/1.0\n\n", 200)
expect("a space before the colon", b"GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", 400)
expect("a folded header", b"GET /metrics HTTP/1.1\r\nHost: x\r\n y\r\n\r\n", 400)
# Every slot taken by clients that say nothing: the next is turned away at
# once; the slots free when they leave.
# The previous request's connection can still hold a slot for a moment after
# its response arrived (the server frees it on its next read), so an idle
# client may be refused: reopen it until all 16 are held.
def refused(s):
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) is not None
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        s.setblocking(True)


idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(16)]
for attempt in range(10):
    time.sleep(0.5)
    turned_away = [i for i, s in enumerate(idle) if refused(s)]
    if not turned_away:
        break
    for i in turned_away:
        idle[i].close()
        idle[i] = socket.create_connection(("127.0.0.1", port))
else:
    fail("16 idle clients were never all held")
expect("the 17th connection", b"GET /metrics HTTP/1.1\r\n\r\n", 503)
for s in idle:
    s.close()
# The server frees a slot when it reads the close; under a loaded host that
# can come after a new connection is accepted. Only a lasting 503 is wrong.
for attempt in range(50):
    time.sleep(0.1)
    if not exchange(b"GET /metrics HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 503 "):
        break
expect("after they left", b"GET /metrics HTTP/1.1\r\n\r\n", 200)
# A client that says nothing is dropped after the timeout.
s = socket.create_connection(("127.0.0.1", port), timeout=30)
t = time.time()
if s.recv(16) != b"":
    fail("a silent client got data")
waited = time.time() - t
if not 8 < waited < 15:
    fail(f"a silent client was dropped after {waited:.1f} s")
print(f"ok: a silent client was dropped after {waited:.1f} s")
PY
$python /tmp/metrics-abuse.py $PORT || fail "raw requests"
kill -0 "$TIERD_PID" || fail "tierd died"
tierctl_ok pool list >/dev/null
scrape
echo "ok: still serving"

step "counters survive a restart; IPv6"
before=$(metric "$ssd_reads")
moved=$(metric 'tierd_migrated_extents_total{pool="tank",direction="promote"}')
tierd_stop TERM
tierd_start --sample-interval 1 --metrics-listen "[::1]:$PORT"
URL="http://[::1]:$PORT"
curl -sSfg -o /tmp/metrics.txt "$URL/metrics" || fail "GET over IPv6"
$python /tmp/metrics-check.py /tmp/metrics.txt || fail "the exposition does not parse"
after=$(metric "$ssd_reads")
[ "$after" -ge "$before" ] || fail "SSD reads went from $before to $after over a restart"
echo "ok: SSD reads $before -> $after over a restart"
assert_eq "promoted extents after a restart" "$moved" \
	"$(metric 'tierd_migrated_extents_total{pool="tank",direction="promote"}')"
curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" && fail "[::1] also answers on 127.0.0.1"
tierd_stop TERM
echo "metrics: ok"
