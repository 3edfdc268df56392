#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control socket under abuse: a non-root peer can read but change nothing
# (every mutating method that daemon.version lists answers EPERM), and garbage,
# oversized lines, connection storms and clients that never read get errors or
# are turned away, while the daemon keeps answering, its memory stays bounded
# and no device-mapper table changes. Clients that wait, trickle or never read
# are closed after --client-timeout, but a request that takes longer still
# gets its reply; lists in replies are bounded.
. "$TIERD_SOURCE_DIR/tests/vm/lib.sh"

hdd=$(vm_loop_create 128M)
ssd=$(vm_loop_create 64M)
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
# The guest's own python: the host's root-only pyenv shims are no use to nobody.
python=/usr/bin/python3
abuse=/tmp/abuse.py
cat >"$abuse" <<'PY'
# The control socket under abuse; run by tests/vm/cases/control-abuse.sh.
# Usage: abuse.py denied|unprivileged|garbage|idle SOCKET [POOL HDD SSD [TIERD_PID]]
# HDD and SSD are the pool's devices: a check that let a request through
# would act on them, and the caller compares the tables before and after.
# With TIERD_PID, garbage checks that the daemon's memory stays bounded.
import errno, json, os, random, socket, sys, threading, time

mode, path = sys.argv[1], sys.argv[2]
args = sys.argv[3:] + ["tank", "/nonexistent/hdd", "/nonexistent/ssd", ""][len(sys.argv) - 3:]
pool, hdd, ssd, tierd_pid = args[:4]
RSS_GROWTH_MAX = 64 << 20
TIMEOUT = 30
MAX = 65536


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def ok(msg):
    print(f"ok: {msg}", flush=True)


def rss():
    """The daemon's resident memory (all of it: tierd locks its pages)."""
    if not tierd_pid:
        return 0
    with open(f"/proc/{tierd_pid}/status") as f:
        for row in f:
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) << 10
    fail("no VmRSS")


def check_rss(when, before):
    now = rss()
    if now - before > RSS_GROWTH_MAX:
        fail(f"tierd's memory grew from {before >> 20} to {now >> 20} MiB {when}")
    if tierd_pid:
        ok(f"tierd's memory {when}: {before >> 20} -> {now >> 20} MiB")


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)  # blocking: a full listen backlog waits rather than fails
    s.settimeout(TIMEOUT)
    return s


def line(method, params=None, protocol=2):
    req = {"protocol": protocol, "method": method}
    if params is not None:
        req["params"] = params
    return json.dumps(req).encode() + b"\n"


def read_lines(s, want=None):
    """Reply lines until EOF (or `want` lines); a reset after them counts as EOF."""
    buf, lines = b"", []
    while want is None or len(lines) < want:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            one, buf = buf.split(b"\n", 1)
            lines.append(json.loads(one.decode(errors="replace")))
    if buf:
        fail(f"reply without a newline: {buf[:200]!r}")
    return lines


def exchange(data, want=1, shut=True):
    """Send raw bytes on a fresh connection; the replies."""
    s = connect()
    try:
        s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused mid-send; the reply may still be there
    if shut:
        try:
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    replies = read_lines(s, want if not shut else None)
    s.close()
    return replies


def expect_error(what, data, err="EINVAL", pattern=None, count=1):
    replies = exchange(data)
    if len(replies) != count:
        fail(f"{what}: {len(replies)} replies, expected {count}: {replies}")
    for r in replies:
        if r.get("protocol") != 2 or r.get("ok") is not False:
            fail(f"{what}: not an error reply: {r}")
        if r["error"]["code"] != err:
            fail(f"{what}: {r['error']}, expected {err}")
        if pattern and pattern not in r["error"]["message"]:
            fail(f"{what}: message {r['error']['message']!r} lacks {pattern!r}")
    ok(f"{what}: {err} ({replies[0]['error']['message'][:80]})")


def call(method, params=None):
    r = exchange(line(method, params))
    if len(r) != 1:
        fail(f"{method}: {r}")
    return r[0]


def methods():
    r = call("daemon.version")
    if not r["ok"]:
        fail(f"daemon.version: {r}")
    return r["result"]["daemon"]["methods"]


# Plausible params, so that a missing check cannot hide behind a params error.
PLAUSIBLE = {
    "pool.create": {"name": "evil", "hdd": hdd, "wipe_signatures": True},
    "pool.activate": {"name": pool},
    "pool.deactivate": {"name": pool},
    "pool.destroy": {"name": pool, "force": True},
    "pool.import": {"devices": [hdd, ssd]},
    "tier.attach": {"name": pool, "ssd": ssd, "wipe_signatures": True},
    "tier.detach": {"name": pool, "ssd": ssd, "shrink": True},
    "extent.move": {"name": pool, "first": 0, "count": 1, "tier": "ssd"},
}


def denied():
    try:
        connect()
    except PermissionError:
        ok(f"uid {os.getuid()} cannot connect to {path}")
        return
    fail(f"uid {os.getuid()} connected to {path}")


def unprivileged():
    ms = methods()
    mutating = [m["name"] for m in ms if m["mutating"]]
    if len(mutating) < 5:
        fail(f"daemon.version lists too few mutating methods: {ms}")
    for name in mutating:
        params = PLAUSIBLE.get(name, {"name": pool})
        expect_error(f"uid {os.getuid()} {name}", line(name, params), "EPERM", "only root")
        expect_error(f"uid {os.getuid()} {name} without params", line(name), "EPERM")
    r = call("pool.list")
    if not r["ok"]:
        fail(f"uid {os.getuid()} pool.list: {r}")
    ok(f"uid {os.getuid()}: reads answer, all {len(mutating)} mutating methods refused")


def garbage():
    rnd = random.Random(1)
    ms = [m["name"] for m in methods()]
    rss_start = rss()

    # Bytes that are no request at all: every line gets an error, nothing crashes.
    for i in range(200):
        blob = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 2000)))
        blob = blob.replace(b"\n", b"") + b"\n"
        expect_error(f"random bytes {i}", blob) if i < 3 else exchange(blob)
    ok("200 random binary lines")
    expect_error("NUL byte", b'{"protocol":2,"method":"pool.list"}\0\n', pattern="NUL")
    expect_error("invalid UTF-8", b'{"protocol":2,"method":"pool.show","params":{"name":"\xff\xfe\xc3"}}\n',
                 pattern="utf-8")
    expect_error("invalid UTF-8 key", b'{"protocol":2,"method":"pool.list","params":{"\xff\xc3\xa9\xe2":1}}\n')
    expect_error("truncated JSON", b'{"protocol":2,"method":"pool.li\n')
    expect_error("truncated at EOF", b'{"protocol":2,"method":"pool.list"}', pattern="newline")
    expect_error("empty lines", b"\n\n\n", count=3)
    expect_error("not an object", b"[1,2,3]\n")
    expect_error("deep nesting", b'{"protocol":2,"method":"pool.list","params":{"a":' + b"[" * 5000 +
                 b"]" * 5000 + b"}}\n", pattern="deep")
    expect_error("deep nesting, unterminated", b"[" * 60000 + b"\n")
    for proto in (0, 1, 3, -1, 2**64):
        expect_error(f"protocol {proto}", line("pool.list", protocol=proto), "EPROTONOSUPPORT")
    expect_error("protocol as a string", line("pool.list", protocol="2"))
    expect_error("no protocol", b'{"method":"pool.list"}\n')
    expect_error("extra member", b'{"protocol":2,"method":"pool.list","x":1}\n')
    for m in ("pool.nuke", "", "POOL.LIST", "pool list", "a" * 200, "pool.list\u00e9"):
        expect_error(f"method {m[:20]!r}", line(m))
    expect_error("method not a string", b'{"protocol":2,"method":["pool.list"]}\n')
    expect_error("params not an object", b'{"protocol":2,"method":"pool.list","params":[]}\n')

    # Wrong types and unknown params: refused before anything is looked at.
    def jtype(v):
        if isinstance(v, int) and not isinstance(v, bool):
            return "uint64" if 0 <= v < 2**64 else "int"
        return type(v).__name__

    wrong = [1, -1, 1.5, 1e400, True, None, "x", [], ["x"], {}, {"a": 1}, 2**64]
    # Paths that do not exist: a type check that failed would show as ENOENT.
    create = {"name": "p", "hdd": "/nonexistent/hdd", "ssd": "/nonexistent/ssd",
              "extent_size_bytes": 4194304, "wipe_signatures": False}
    for key, good in create.items():
        for bad in wrong:
            if jtype(bad) == jtype(good) or (key == "extent_size_bytes" and bad == 2**64):
                continue
            p = dict(create, **{key: bad})
            expect_error(f"pool.create {key}={json.dumps(bad)[:20]}", line("pool.create", p))
    move = {"name": pool, "first": 0, "count": 1, "tier": "ssd"}
    for key in move:
        for bad in ("7", -5, 1.5, None, [], {}):
            if key in ("name", "tier") and bad == "7":
                continue
            expect_error(f"extent.move {key}={json.dumps(bad)}", line("extent.move", dict(move, **{key: bad})))
    expect_error("pool.import devices of numbers", line("pool.import", {"devices": [1, 2]}))
    expect_error("pool.import devices a string", line("pool.import", {"devices": "/dev/loop0"}))
    for m in ms:
        expect_error(f"{m} with a wrong-typed name", line(m, {"name": 12345}))
        expect_error(f"{m} with an unknown param", line(m, {"no_such_param": True}))

    # The framing limit: a line of RPC_REQUEST_MAX bytes is a request, one byte more is not.
    req = b'{"protocol":2,"method":"pool.list"}'
    r = exchange(req + b" " * (MAX - len(req)) + b"\n")
    if len(r) != 1 or not r[0]["ok"]:
        fail(f"a request of exactly {MAX} bytes: {r}")
    ok(f"a request of exactly {MAX} bytes answers")
    expect_error("a request one byte too long", req + b" " * (MAX - len(req) + 1) + b"\n",
                 pattern="longer than")
    # Oversized without a newline: answered, then hung up, whatever follows.
    s = connect()
    try:
        s.sendall(b"x" * (4 * MAX) + line("pool.list"))
    except (BrokenPipeError, ConnectionResetError):
        pass
    r = read_lines(s)
    if len(r) != 1 or r[0]["ok"] or "longer than" not in r[0]["error"]["message"]:
        fail(f"oversized line: {r}")
    ok("oversized line: one error, then the connection closes")
    s.close()
    # A first request answered, the second too long: both replies, in order.
    r = exchange(line("pool.list") + b"y" * (MAX + 10))
    if len(r) != 2 or not r[0]["ok"] or r[1]["ok"]:
        fail(f"request then oversized line: {r}")
    ok("a request, then an oversized line: the reply, then the refusal")

    # Many connections: past the cap, extra ones are turned away with EAGAIN.
    held = [connect() for _ in range(64)]
    time.sleep(1)
    extra = [connect() for _ in range(8)]
    refused = 0
    for s in extra:
        r = read_lines(s)
        if len(r) == 1 and r[0]["error"]["code"] == "EAGAIN":
            refused += 1
        s.close()
    if refused != 8:
        fail(f"{refused} of 8 connections past 64 refused")
    ok("connections past 64 are refused with EAGAIN")
    for s in held:
        s.close()
    # A slot frees when tierd reads the close, which a loaded host can delay
    # past the next accept: only a lasting refusal is wrong.
    for attempt in range(50):
        time.sleep(0.1)
        r = call("pool.list")
        if r["ok"] or r.get("error", {}).get("code") != "EAGAIN":
            break
    if not r["ok"]:
        fail(f"pool.list after the connection storm: {r}")
    ok("a new connection is served once the others closed")

    # Thousands of pipelined requests on many connections, every reply in order.
    reqs = [line("daemon.version"), line("pool.list"), line("pool.show", {"name": pool}),
            b"garbage\n", line("nope.nope")]
    expect = [exchange(r)[0]["ok"] for r in reqs]

    def pipeline(n, results, i):
        s = connect()
        data = b"".join(reqs[j % len(reqs)] for j in range(n))
        w = threading.Thread(target=s.sendall, args=(data,))
        w.start()
        replies = read_lines(s, n)
        w.join()
        s.close()
        good = all(r["ok"] == expect[j % len(reqs)] for j, r in enumerate(replies))
        results[i] = (len(replies), good)

    results = [None] * 16
    threads = [threading.Thread(target=pipeline, args=(500, results, i)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if results != [(500, True)] * 16:
        fail(f"pipelined requests: {results}")
    ok("16 connections x 500 pipelined requests: every reply, in order")

    # Clients that send and never read: the daemon stops reading them, not serving others.
    hogs = []
    for _ in range(8):
        s = connect()
        s.setblocking(False)
        sent = 0
        data = line("daemon.version") * 1000
        try:
            while sent < 64 * len(data):
                sent += s.send(data[sent % len(data):])
        except BlockingIOError:
            pass
        hogs.append((s, sent))
    ok(f"8 clients that never read sent {sum(n for _, n in hogs)} bytes before blocking")
    r = call("pool.list")
    if not r["ok"]:
        fail(f"pool.list beside the hogs: {r}")
    ok("pool.list answers beside clients that never read")
    check_rss("with clients that never read", rss_start)
    for s, _ in hogs:
        s.close()
    r = call("pool.list")
    if not r["ok"]:
        fail(f"pool.list after the hogs: {r}")
    check_rss("after the garbage", rss_start)



def closed_by_daemon(s):
    """True once the daemon has closed s (EOF or reset), waiting up to TIMEOUT."""
    try:
        while True:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except (socket.timeout, TimeoutError):
        return False


def idle():
    # Run with --client-timeout IDLE: every slot taken by clients that wait,
    # or trickle a byte a second, or never read a reply, frees up.
    idle_s = int(os.environ["IDLE"])
    waiting = [connect() for _ in range(40)]
    trickling = [connect() for _ in range(12)]
    deaf = []
    for _ in range(12):
        s = connect()
        s.setblocking(False)
        data = line("pool.list") * 1000
        try:
            while True:
                s.send(data)
        except BlockingIOError:
            pass
        deaf.append(s)
    r = exchange(line("pool.list"))
    if r[0].get("ok") is not False or r[0]["error"]["code"] != "EAGAIN":
        fail(f"a 65th connection: {r}")
    ok("64 idle clients hold every connection; a 65th is refused")
    start = time.monotonic()
    trickled = set()
    while time.monotonic() - start < idle_s + 2:
        for s in trickling:
            if s in trickled:
                continue
            try:
                s.send(b" ")
            except (BrokenPipeError, ConnectionResetError):
                trickled.add(s)  # a byte a second is not a request: closed
        time.sleep(1)
    if len(trickled) != len(trickling):
        fail(f"{len(trickling) - len(trickled)} clients sending a byte a second were not closed")
    for s in waiting + trickling + deaf:
        s.setblocking(True)
        s.settimeout(TIMEOUT)
    for s in waiting + trickling:
        if not closed_by_daemon(s):
            fail("a client idle past --client-timeout was not closed")
    for s in deaf:
        # Its replies are still queued; the daemon gave up sending them.
        try:
            while s.recv(1 << 20):
                pass
        except ConnectionResetError:
            pass
    ok(f"{len(waiting)} waiting, {len(trickling)} trickling and {len(deaf)} deaf clients"
       f" closed after {time.monotonic() - start:.0f} s")
    r = call("pool.list")
    if not r["ok"]:
        fail(f"pool.list after the idle clients: {r}")
    ok("pool.list answers once they are gone")
    # Replies are bounded where they are asked for.
    expect_error("heat.top with top 10001", line("heat.top", {"name": pool, "top": 10001}),
                 pattern="top must be 1 to 10000")
    expect_error("runs.list with limit 10001", line("runs.list", {"name": pool, "limit": 10001}),
                 pattern="limit must be 1 to 10000")
    expect_error("a dry run listing 10001 moves",
                 line("tier.now", {"name": pool, "dry_run": True, "limit": 10001}),
                 pattern="limit must be 1 to 10000")
    r = call("heat.top", {"name": pool, "top": 10000})
    if not r["ok"]:
        fail(f"heat.top with top 10000: {r}")
    ok("heat.top with top 10000 answers")


{"denied": denied, "unprivileged": unprivileged, "garbage": garbage, "idle": idle}[mode]()
PY

tierd_start
tierctl_ok pool create tank --hdd "$hdd" --ssd "$ssd"
table_before=$(dmsetup table)
# What a change would show in; heat and sampling fields move on their own.
pools() {
	"$TIERCTL" pool list --json |
		jq -c '[.pools[] | {name, state, size_bytes, metadata_generation, tiers: [.tiers[] |
			{name, used_extents, devices: [.devices[].path]}]}]'
}
pools_before=$(pools)
echo "$table_before"

step "the default socket mode keeps other users out"
"${nobody[@]}" "$python" "$abuse" denied "$TIERD_SOCKET"
# The socket's own mode (0660 root) is enough, even with its directory open.
chmod o+x "$(dirname "$TIERD_SOCKET")"
"${nobody[@]}" "$python" "$abuse" denied "$TIERD_SOCKET"

step "SO_PEERCRED: a non-root peer reads, and every mutating method refuses it"
# Test only: open the socket to everyone, so that what refuses is the daemon's
# own check of the peer's uid, not the file mode.
chmod 0666 "$TIERD_SOCKET"
"${nobody[@]}" "$python" "$abuse" unprivileged "$TIERD_SOCKET" tank "$hdd" "$ssd"
chmod 0660 "$TIERD_SOCKET"
chmod o-x "$(dirname "$TIERD_SOCKET")"

step "garbage, oversized lines, connection storms, clients that never read"
"$python" "$abuse" garbage "$TIERD_SOCKET" tank "$hdd" "$ssd" "$TIERD_PID"

step "idle clients are closed after --client-timeout; replies are bounded"
tierd_stop TERM
tierd_start --client-timeout 3
IDLE=3 "$python" "$abuse" idle "$TIERD_SOCKET" tank "$hdd" "$ssd"

step "a request that outlasts --client-timeout still gets its reply"
# pool create blocks the loop while it writes the map of a 16 TiB pool (4
# million extents, seconds even on a quick host): the reply once it is done
# is activity, not a reason to hang up.
tierd_stop TERM
tierd_start --client-timeout 1
slow=$(vm_loop_create 16T)
t0=$(date +%s%N)
tierctl_ok pool create slow --hdd "$slow"
took=$((($(date +%s%N) - t0) / 1000000))
[ "$took" -gt 1500 ] || fail "pool create took $took ms, not well over the 1 s timeout: use a larger pool"
echo "ok: pool create took $took ms with --client-timeout 1"
tierctl_ok pool destroy slow --yes
losetup -d "$slow"

step "the daemon is unharmed and nothing changed"
kill -0 "$TIERD_PID" || { cat /tmp/tierd.log >&2; fail "tierd died"; }
tierctl_ok pool list
assert_eq "pools" "$pools_before" "$(pools)"
assert_eq "dmsetup table" "$table_before" "$(dmsetup table)"
tierd_stop TERM
echo "control-abuse: ok"
