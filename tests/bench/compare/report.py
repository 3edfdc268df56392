#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn a bench-compare.sh results folder into report.md and benchmarks.svg.

Usage: report.py RESULTS_DIR

Reads results.tsv (one line per steady-state fio job), the warm-up IOPS
slices in raw/, and the machine and host descriptions; computes ratios to
HDD-only and SSD-only, the oracle bound of each skew (from the access
distribution fio itself generates, replayed with the null engine) and the
time-to-benefit; writes RESULTS_DIR/report.md and RESULTS_DIR/benchmarks.svg
(with gnuplot, when installed).
"""
import collections
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

SKEWS = {
    "uniform": "uniform, 32 MiB on the SSD tier",
    "z100": "zoned:100/10:0/90",
    "z90": "zoned:90/10:10/90",
    "zipf": "zipf:1.2",
    "none": "-",
}
SKEW_ORDER = ["z100", "z90", "zipf"]
# What bench-compare passes fio: zipf's hot set pinned (center 0), so that
# the replay below counts the very blocks the runs read hot. (Runs made
# with TIERD_BENCH_SEEDS=replay had fio place it by their seed: another
# set of the same shape.)
FIO_SPEC = dict(SKEWS, zipf="zipf:1.2:0")
PROFILES = {
    "rr4k": "4K random read",
    "rw4k": "4K random write",
    "mix8k": "8K random 70/30",
    "sql90": "SQL-like 8K 90/10",
    "sql80": "SQL-like 8K 80/20",
    "sr64k": "64K sequential read",
    "sw64k": "64K sequential write",
}
CONFIGS = ["hdd", "ssd", "tierd", "auto", "slice", "lvmcache", "bcache"]
NAMES = {"hdd": "HDD-only", "ssd": "SSD-only", "tierd": "tierd",
         "auto": "tierd, schedule auto", "slice": "tierd + dm-cache slice",
         "lvmcache": "lvmcache (smq)", "bcache": "bcache"}
MiB = 1 << 20


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        for line in open(path):
            if "\t" in line:
                k, v = line.rstrip("\n").split("\t", 1)
                kv[k] = v
    return kv


def fmt_iops(x):
    return "-" if x is None else f"{x:,.0f}"


def fmt_ms(us):
    return "-" if us is None else f"{us / 1000:.2f}"


def fmt_ratio(x):
    return "-" if x is None else f"{x:.2f}x"


def fmt_pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


class Results:
    def __init__(self, path):
        # (cfg, prof, skew) -> list of (tag, iops, mean_us, p99_us)
        self.rows = collections.defaultdict(list)
        for line in open(path):
            f = line.rstrip("\n").split("\t")
            if len(f) != 7:
                continue
            cfg, prof, skew, tag = f[:4]
            self.rows[(cfg, prof, skew)].append((tag, int(f[4]), int(f[5]), int(f[6])))

    def own(self, cfg, prof, skew):
        """A configuration's own runs (tags r1, r2, ...)."""
        return [r for r in self.rows.get((cfg, prof, skew), []) if r[0].startswith("r")]

    def refs(self, ref, cfg, prof, skew):
        """The reference runs (hdd or ssd) paired with cfg's runs."""
        return [r for r in self.rows.get((ref, prof, skew), []) if r[0].startswith(cfg + "-r")]

    def summary(self, cfg, prof, skew):
        """Median IOPS, mean latency, p99 of a configuration's own runs; for
        hdd and ssd every run counts (baselines and the paired references)."""
        runs = self.rows.get((cfg, prof, skew), []) if cfg in ("hdd", "ssd") else self.own(cfg, prof, skew)
        if not runs:
            return None
        return (statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs),
                statistics.median(r[3] for r in runs), len(runs))

    def pair_ratios(self, cfg, ref, prof, skew):
        """Each own run over the reference run made right after it."""
        refs = {r[0]: r for r in self.refs(ref, cfg, prof, skew)}
        return [r[1] / refs[cfg + "-" + r[0]][1] for r in self.own(cfg, prof, skew)
                if cfg + "-" + r[0] in refs]

    def paired_ratio(self, cfg, ref, prof, skew):
        """IOPS of cfg over its adjacent reference runs; falls back on all of
        the reference's runs of that workload."""
        own = self.own(cfg, prof, skew)
        refs = self.refs(ref, cfg, prof, skew) or self.rows.get((ref, prof, skew), [])
        if not own or not refs:
            return None
        return sum(r[1] for r in own) / len(own) / (sum(r[1] for r in refs) / len(refs))


def unit_counts(skew, size_mb, bs, tmp, units):
    """Replay fio's own generator of SKEW over SIZE_MB (the null engine,
    2 GiB of I/O) and count its I/Os by each unit of UNITS (bytes). Half
    of the I/Os pick the hottest units, the other half measure them:
    ranking and counting the same sample would pick units that were hot by
    chance (in zoned's uniform cold part, say) and overstate the share.
    Returns (pick, count, m): a Counter per unit of each half, and the
    I/Os of the measuring half; None for a skew fio cannot replay."""
    if skew not in ("z100", "z90", "zipf") or not shutil.which("fio"):
        return None
    log = os.path.join(tmp, f"{skew}.iolog")
    subprocess.run(["fio", "--name=oracle", "--ioengine=null", f"--size={size_mb}M",
                    "--rw=randread", f"--bs={bs}", f"--random_distribution={FIO_SPEC[skew]}",
                    "--norandommap", "--io_size=2G", f"--write_iolog={log}",
                    "--output=/dev/null"], check=True)
    pick = {u: collections.Counter() for u in units}
    count = {u: collections.Counter() for u in units}
    n = 0
    for line in open(log):
        f = line.split()
        # Version 3 logs start each line with a timestamp.
        if len(f) >= 4 and f[-3] == "read":
            off = int(f[-2])
            c = pick if n % 2 == 0 else count
            for u in units:
                c[u][off // u] += 1
            n += 1
    os.unlink(log)
    return pick, count, n // 2


def hot_units(counts, unit, cap):
    """The hottest CAP bytes of UNIT-sized units, from unit_counts, and the
    share of the measuring half's I/Os they take."""
    pick, count, m = counts
    hot = [k for k, _ in pick[unit].most_common(cap // unit)]
    return hot, sum(count[unit][k] for k in hot) / m


def access_shares(skew, size_mb, bs, cap_bytes_list, tmp, extent):
    """For fio's own generator of SKEW over SIZE_MB: the share of I/Os that
    land in the hottest CAP bytes, counted by 4 KiB block and by EXTENT
    bytes. Returns {cap: (share_4k, share_extent)}."""
    counts = unit_counts(skew, size_mb, bs, tmp, (4096, extent))
    if counts is None:
        return None
    return {cap: (hot_units(counts, 4096, cap)[1], hot_units(counts, extent, cap)[1])
            for cap in cap_bytes_list}


def slices(path):
    pts = []
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 2:
                pts.append((float(f[0]), float(f[1])))
    return pts


def ttb(pts, steady):
    """Seconds from the cold start to the end of the first slice at 80% of
    steady state; None if no slice got there."""
    for t, v in pts:
        if v >= 0.8 * steady:
            return t
    return None


def main():
    d = sys.argv[1]
    host = read_kv(os.path.join(d, "host.tsv"))
    machine = read_kv(os.path.join(d, "machine.tsv"))
    params = dict(p.split("=") for p in machine.get("params", "").split())
    size_mb = int(params.get("size_mb", 352))
    ssd_mb = int(params.get("ssd_mb", 96))
    ext_mb = int(params.get("extent_mb", 4))
    warm = int(params.get("warm", 45))
    # The warm-up of a configuration: "auto" has its own, longer one.
    warm_of = {"auto": int(params.get("warm_auto", warm))}
    res = Results(os.path.join(d, "results.tsv"))
    skipped = read_kv(os.path.join(d, "skipped.tsv"))
    md = []
    w = md.append

    # ---- what tierd actually placed on the SSD, per skew
    tierd_used = {}
    for skew in SKEW_ORDER:
        p = os.path.join(d, "raw", f"tierd-rr4k-{skew}.stats.json")
        try:
            st = json.load(open(p))
            for t in st["stats"]["tiers"]:
                if t["class"] == "ssd":
                    tierd_used[skew] = t["used_extents"]
        except (OSError, ValueError, KeyError):
            pass

    # ---- oracle shares, from fio's own distributions
    tmp = tempfile.mkdtemp(prefix="bench-oracle.")
    shares = {}
    try:
        for skew in SKEW_ORDER:
            caps = {ssd_mb * MiB}
            if skew in tierd_used:
                caps.add(tierd_used[skew] * ext_mb * MiB)
            shares[skew] = access_shares(skew, size_mb, "4k", sorted(caps), tmp, ext_mb * MiB)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    # ---- machine
    w("### Machine and run\n")
    w(f"- Host: {host.get('host_cpu', '?')}, {host.get('host_cpus', '?')} CPUs, kernel "
      f"{host.get('host_kernel', '?')}; {host.get('qemu', 'qemu')} (TCG, no KVM)")
    w(f"- Guest: Debian kernel {machine.get('kernel', '?')}, {machine.get('guest_cpus', '?')} vCPUs, "
      f"3 GiB; {machine.get('fio', 'fio')}, LVM {machine.get('lvm', '?')}, bcache-tools "
      f"{machine.get('make-bcache', '?')}")
    w(f"- Devices: {machine.get('devices', '?')}")
    w(f"- Parameters: {machine.get('params', '?')}")
    w(f"- Command: `{host.get('command', '?')}`, {host.get('date', '?')}, wall time "
      f"{int(host.get('wall_s', 0)) // 60} min{host.get('note', '')}")
    loads = []
    lp = os.path.join(d, "host-load.txt")
    if os.path.exists(lp):
        loads = [float(l.split()[1]) for l in open(lp) if len(l.split()) >= 2]
    if loads:
        w(f"- Host load average (1 min) during the run: min {min(loads):.1f}, median "
          f"{statistics.median(loads):.1f}, max {max(loads):.1f} on {host.get('host_cpus', '?')} CPUs")
    for k, v in skipped.items():
        w(f"- Skipped: {v}")
    w("")

    # ---- 4K random read, three skews
    ssd_cap = ssd_mb * MiB
    w("### 4K random read, QD16, by skew\n")
    w("IOPS and latency are medians over the runs; x HDD and x SSD are ratios to the HDD-only "
      "and SSD-only runs of the same workload (for tierd and the caches, to the SSD-only runs "
      "made right after each of their own runs). Oracle: min(SSD-only, HDD-only / miss share) "
      f"with the hottest {ssd_mb} MiB on the SSD. TTB: time-to-benefit.\n")
    w("| skew | configuration | IOPS | mean ms | p99 ms | x HDD | x SSD | % of oracle | TTB s |")
    w("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    table_a = {}
    oracle = {}
    for skew in SKEW_ORDER:
        hdd = res.summary("hdd", "rr4k", skew)
        ssd = res.summary("ssd", "rr4k", skew)
        if hdd and ssd and shares.get(skew):
            miss = 1 - shares[skew][ssd_cap][0]
            oracle[skew] = min(ssd[0], hdd[0] / miss) if miss > 1e-9 else ssd[0]
        for cfg in CONFIGS:
            s = res.summary(cfg, "rr4k", skew)
            if not s:
                continue
            if cfg == "hdd":
                xh, xs = 1.0, (hdd[0] / ssd[0] if ssd else None)
            elif cfg == "ssd":
                xh, xs = (ssd[0] / hdd[0] if hdd else None), 1.0
            else:
                xh = s[0] / hdd[0] if hdd else None
                xs = res.paired_ratio(cfg, "ssd", "rr4k", skew)
            # % of oracle: scaled by the paired SSD ratio, so that the host's
            # drifting load cancels out where the oracle is SSD-bound.
            po = None
            if skew in oracle and xs is not None:
                po = xs * ssd[0] / oracle[skew] if cfg not in ("hdd",) else s[0] / oracle[skew]
            t = None
            if cfg in ("tierd", "auto", "slice", "lvmcache", "bcache"):
                t = ttb(slices(os.path.join(d, "raw", f"warm-{cfg}-rr4k-{skew}.slices")), s[0])
            table_a[(cfg, skew)] = dict(iops=s[0], mean=s[1], p99=s[2], xh=xh, xs=xs, po=po, ttb=t)
            tt = "-" if cfg in ("hdd", "ssd") else (f"{t:.0f}" if t is not None
                                                    else f"> {warm_of.get(cfg, warm)}")
            w(f"| {SKEWS[skew]} | {NAMES[cfg]} | {fmt_iops(s[0])} | {fmt_ms(s[1])} | {fmt_ms(s[2])} | "
              f"{fmt_ratio(xh)} | {fmt_ratio(xs)} | {fmt_pct(po)} | {tt} |")
    w("")

    # ---- the oracle
    w("### The oracle bound of each skew\n")
    w("Share of I/Os that fio's generator sends to the hottest data, replayed with "
      "`--ioengine=null` over the same range: by 4 KiB block (what any placement could "
      f"reach) and by {ext_mb} MiB extent (what extent tiering can reach). Fixed-QD bound: "
      "1 / (h / SSD-only + (1 - h) / HDD-only), the throughput of a closed loop at QD16 "
      "whose HDD I/Os each cost the HDD-only latency (dm-delay adds latency, not a queue).\n")
    fixed_qd = {}
    w("| skew | hit share, hottest "
      f"{ssd_mb} MiB by 4K | by {ext_mb}M extent | tierd's SSD extents | their hit share | oracle IOPS | "
      "fixed-QD bound (4K) | fixed-QD bound (tierd's extents) | tierd | lvmcache | bcache |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for skew in SKEW_ORDER:
        sh = shares.get(skew)
        hdd = res.summary("hdd", "rr4k", skew)
        ssd = res.summary("ssd", "rr4k", skew)
        if not sh or not hdd or not ssd:
            continue
        h4k, h4m = sh[ssd_cap]
        u = tierd_used.get(skew)
        hu = sh[u * ext_mb * MiB][1] if u and (u * ext_mb * MiB) in sh else None
        fq = 1 / (h4k / ssd[0] + (1 - h4k) / hdd[0])
        fixed_qd[skew] = fq
        fqt = 1 / (hu / ssd[0] + (1 - hu) / hdd[0]) if hu is not None else None
        at = table_a.get(("tierd", skew))
        fqt_txt = (f"{fmt_iops(fqt)} (tierd at {fmt_pct(at['xs'] * ssd[0] / fqt)})"
                   if fqt and at and at["xs"] else fmt_iops(fqt))
        cells = []
        for cfg in ("tierd", "lvmcache", "bcache"):
            a = table_a.get((cfg, skew))
            cells.append(f"{fmt_iops(a['xs'] * ssd[0] if a and a['xs'] else None)} ({fmt_pct(a['po'] if a else None)})")
        w(f"| {SKEWS[skew]} | {h4k:.1%} | {h4m:.1%} | {u if u is not None else '-'} "
          f"({(u or 0) * ext_mb} MiB) | {hu:.1%} | {fmt_iops(oracle.get(skew))} | {fmt_iops(fq)} | {fqt_txt} | "
          + " | ".join(cells) + " |" if hu is not None else
          f"| {SKEWS[skew]} | {h4k:.1%} | {h4m:.1%} | - | - | {fmt_iops(oracle.get(skew))} | {fmt_iops(fq)} | - | "
          + " | ".join(cells) + " |")
    w("")
    w("tierd, lvmcache and bcache are shown here as the SSD-only IOPS of the run times their "
      "paired ratio to SSD-only, which cancels the host's load drift.\n")

    # ---- time to benefit
    w("### Time-to-benefit, 4K random read\n")
    w(f"IOPS per {params.get('slice', 5)} s slice from a cold start (fio started at 0 s); tierd's "
      f"on-demand tiering run starts at {params.get('trigger', 10)} s. TTB = end of the first "
      "slice at 80% of the configuration's steady state.\n")
    w("| skew | configuration | steady IOPS | TTB s | tiering run | slices (IOPS) |")
    w("|---|---|---:|---:|---|---|")
    for skew in SKEW_ORDER:
        for cfg in ("tierd", "auto", "slice", "lvmcache", "bcache"):
            a = table_a.get((cfg, skew))
            pts = slices(os.path.join(d, "raw", f"warm-{cfg}-rr4k-{skew}.slices"))
            if not a or not pts:
                continue
            run = "-"
            tp = os.path.join(d, "raw", f"warm-{cfg}-rr4k-{skew}.times")
            if os.path.exists(tp):
                kv = dict(x.split("=") for x in open(tp).read().split())
                run = f"{kv['trigger_s']} s to {kv['done_s']} s"
            tt = f"{a['ttb']:.0f}" if a["ttb"] is not None else f"> {warm_of.get(cfg, warm)}"
            w(f"| {SKEWS[skew]} | {NAMES[cfg]} | {fmt_iops(a['iops'])} | {tt} | {run} | "
              + " ".join(f"{v:.0f}" for _, v in pts) + " |")
    w("")

    # ---- other profiles
    profs = [p for p in PROFILES if p != "rr4k" and any(k[1] == p for k in res.rows)]
    if profs:
        w("### Other profiles\n")
        w("Random profiles under zoned:90/10:10/90, sequential ones over the whole range. "
          "tierd: one on-demand tiering run after a warm-up with the same workload; the "
          "caches: after a warm-up of their own. x HDD and x SSD: against the HDD-only and "
          "SSD-only runs made right after each run.\n")
        w("| profile | skew | configuration | IOPS | MiB/s | mean ms | p99 ms | x HDD | x SSD |")
        w("|---|---|---|---:|---:|---:|---:|---:|---:|")
        for p in profs:
            skew = next(k[2] for k in res.rows if k[1] == p)
            bs = {"sr64k": 64, "sw64k": 64, "rw4k": 4, "rr4k": 4}.get(p, 8)
            hdd = res.summary("hdd", p, skew)
            ssd = res.summary("ssd", p, skew)
            for cfg in CONFIGS:
                s = res.summary(cfg, p, skew)
                if not s:
                    continue
                if cfg == "hdd":
                    xh, xs = 1.0, (hdd[0] / ssd[0] if ssd else None)
                elif cfg == "ssd":
                    xh, xs = (ssd[0] / hdd[0] if hdd else None), 1.0
                else:
                    xh = res.paired_ratio(cfg, "hdd", p, skew)
                    xs = res.paired_ratio(cfg, "ssd", p, skew)
                w(f"| {PROFILES[p]} | {SKEWS[skew]} | {NAMES[cfg]} | {fmt_iops(s[0])} | "
                  f"{s[0] * bs / 1024:.1f} | {fmt_ms(s[1])} | {fmt_ms(s[2])} | {fmt_ratio(xh)} | {fmt_ratio(xs)} |")
        w("")

    # ---- overhead
    ot = res.own("ovh-tierd", "rr4k", "uniform")
    os_ = res.own("ovh-ssd", "rr4k", "uniform")
    ovh = None
    if ot and os_:
        w("### The volume against the raw SSD\n")
        w("4K random read, uniform over 32 MiB that sit on the SSD tier, alternating with the "
          "same job on an SSD-only loop device.\n")
        w("| run | tierd volume IOPS | raw SSD IOPS | ratio |")
        w("|---|---:|---:|---:|")
        for a, b in zip(ot, os_):
            w(f"| {a[0]} | {a[1]:,} | {b[1]:,} | {a[1] / b[1]:.2f} |")
        ovh = statistics.median(a[1] / b[1] for a, b in zip(ot, os_))
        w(f"| median | {statistics.median(r[1] for r in ot):,.0f} | "
          f"{statistics.median(r[1] for r in os_):,.0f} | {ovh:.2f} |")
        w("")

    # ---- concurrent comparisons
    conc = {}
    for prof, skew, ref in (("rr4k", "uniform", "conc-ssd"), ("rr4k", "z100", "conc-ssd"),
                            ("sr64k", "none", "conc-hdd")):
        t = res.rows.get(("conc-tierd", prof, skew), [])
        u = {r[0]: r for r in res.rows.get((ref, prof, skew), [])}
        pairs = [(r, u[r[0]]) for r in t if r[0] in u]
        if pairs:
            conc[skew] = (statistics.median(a[1] / b[1] for a, b in pairs), pairs)
    if conc:
        w("### The volume and the raw SSD at the same time\n")
        w("One fio run with two jobs started together, one on the tierd volume, one on the "
          "SSD-only device, each 4K random read at QD16: both see the same host load at the "
          "same moments. uniform: 32 MiB that sit on the SSD tier; zoned:100/10:0/90: the "
          "whole 352 MiB range after tiering.\n")
        w("64K sequential read (last rows): a fresh tierd volume, every extent on the HDD "
          "tier, beside the md device itself.\n")
        w("| workload | round | tierd volume IOPS | raw device IOPS | ratio |")
        w("|---|---|---:|---:|---:|")
        for skew, (med, pairs) in conc.items():
            for a, b in pairs:
                w(f"| {SKEWS.get(skew, skew) if skew != 'none' else '64K sequential read vs md'} | {a[0]} | {a[1]:,} | {b[1]:,} | {a[1] / b[1]:.3f} |")
            w(f"| {SKEWS.get(skew, skew) if skew != 'none' else '64K sequential read vs md'} | median | | | {med:.3f} |")
        w("")

    # ---- targets
    w("### Targets\n")
    w("| target | measured | met |")
    w("|---|---|---|")

    def spread(ratios, lo, hi=None):
        """Verdict on a list of ratios: met only if every one is, missed only
        if none is; otherwise the noise is larger than the margin."""
        if not ratios:
            return "-", None
        ok = [lo <= x and (hi is None or x <= hi) for x in ratios]
        txt = f"median {statistics.median(ratios):.2f} (runs {min(ratios):.2f} to {max(ratios):.2f})"
        if all(ok):
            return txt, True
        if all(x < lo for x in ratios) or (hi is not None and all(x > hi for x in ratios)):
            return txt, False
        return txt, "not resolved: the runs straddle the target"

    def tgt(name, value, ok):
        verdict = ok if isinstance(ok, str) else ("yes" if ok else ("no" if ok is not None else "not measured"))
        w(f"| {name} | {value} | {verdict} |")
    a = table_a.get(("tierd", "z100"))
    tgt("zoned:100/10:0/90: tierd >= 95% of SSD-only 4K random read (adjacent runs)",
        *spread(res.pair_ratios("tierd", "ssd", "rr4k", "z100"), 0.95))
    if "z100" in conc:
        tgt("zoned:100/10:0/90: tierd >= 95% of SSD-only 4K random read (concurrent runs)",
            *spread([x[0][1] / x[1][1] for x in conc["z100"][1]], 0.95))
    for skew in ("z90", "zipf"):
        a = table_a.get(("tierd", skew))
        l = table_a.get(("lvmcache", skew))
        tgt(f"{SKEWS[skew]}: tierd >= 95% of the oracle bound",
            fmt_pct(a["po"]) if a else "-", a["po"] >= 0.95 if a and a["po"] else None)
        if a and l and a["xs"] and l["xs"]:
            tgt(f"{SKEWS[skew]}: tierd >= lvmcache's steady state",
                f"{a['xs'] / l['xs']:.2f}x lvmcache", a["xs"] >= l["xs"])
        else:
            tgt(f"{SKEWS[skew]}: tierd >= lvmcache's steady state", "-", None)
        if a:
            tgt(f"{SKEWS[skew]}: time-to-benefit (tierd / lvmcache / bcache)",
                " / ".join((f"{x['ttb']:.0f} s" if x["ttb"] is not None else f"> {warm} s") if x else "-"
                           for x in (a, l, table_a.get(("bcache", skew)))), "reported")
    # Against bcache and the bounds: tierd as a pool is meant to run
    # (schedule auto), with the one run of tier now beside it.
    def x_ssd(cfg, skew):
        a = table_a.get((cfg, skew))
        return a["xs"] if a and a["xs"] else None

    for skew in ("z90", "zipf"):
        b = x_ssd("bcache", skew)
        t, au = x_ssd("tierd", skew), x_ssd("auto", skew)
        if b and (t or au):
            tgt(f"{SKEWS[skew]}: tierd >= bcache's steady state (schedule auto; tier now)",
                "; ".join(f"{name} {x / b:.2f}x bcache" for name, x in (("auto", au), ("tier now", t)) if x),
                au >= b if au else None)
    ssd = res.summary("ssd", "rr4k", "zipf")
    au = x_ssd("auto", "zipf")
    if ssd and au and "zipf" in oracle:
        tgt("zipf:1.2: tierd >= 85% of the 4 KiB oracle (schedule auto)",
            fmt_pct(au * ssd[0] / oracle["zipf"]), au * ssd[0] / oracle["zipf"] >= 0.85)
    ssd = res.summary("ssd", "rr4k", "z90")
    if ssd and "z90" in fixed_qd:
        vals = [(name, x) for name, x in (("auto", x_ssd("auto", "z90")), ("tier now", x_ssd("tierd", "z90"))) if x]
        if vals:
            tgt("zoned:90/10:10/90: tierd >= 95% of the fixed-QD bound (schedule auto; tier now)",
                "; ".join(f"{name} {fmt_pct(x * ssd[0] / fixed_qd['z90'])}" for name, x in vals),
                vals[0][1] * ssd[0] / fixed_qd["z90"] >= 0.95 if vals[0][0] == "auto" else None)
    # The target for schedule auto: from a cold pool, no tier now.
    for skew in SKEW_ORDER:
        a = table_a.get(("auto", skew))
        if not a:
            continue
        auto_ttb = a["ttb"]
        tgt(f"{SKEWS[skew]}: schedule auto, time-to-benefit <= 60 s from a cold start",
            (f"{auto_ttb:.0f} s" if auto_ttb is not None else f"> {warm_of['auto']} s") +
            (f", steady state {a['xs']:.2f}x SSD-only" if a["xs"] else ""),
            auto_ttb is not None and auto_ttb <= 60)
    for p in ("sr64k", "sw64k"):
        skew = "none"
        tgt(f"{PROFILES[p]}: tierd within 5% of HDD-only (adjacent runs)",
            *spread(res.pair_ratios("tierd", "hdd", p, skew), 0.95, 1.05))
        if p == "sr64k" and "none" in conc:
            tgt("64K sequential read: tierd within 5% of HDD-only (concurrent runs, fresh pool)",
                *spread([x[0][1] / x[1][1] for x in conc["none"][1]], 0.95, 1.05))
    tgt("all data on the SSD tier: volume within 3% of the raw SSD, 4K random read (alternating runs)",
        *spread([a[1] / b[1] for a, b in zip(ot, os_)], 0.97))
    if "uniform" in conc:
        tgt("all data on the SSD tier: volume within 3% of the raw SSD, 4K random read (concurrent runs)",
            *spread([x[0][1] / x[1][1] for x in conc["uniform"][1]], 0.97))
    w("")

    open(os.path.join(d, "report.md"), "w").write("\n".join(md) + "\n")
    chart(d, res, table_a, oracle, max(warm, warm_of["auto"]))


def chart(d, res, table_a, oracle, warm):
    if not shutil.which("gnuplot"):
        print("report: gnuplot missing, no chart", file=sys.stderr)
        return
    if not any(res.summary("ssd", "rr4k", s) and res.summary("hdd", "rr4k", s) for s in SKEW_ORDER):
        print("report: no 4K random-read results for every configuration, no chart", file=sys.stderr)
        return
    bars = os.path.join(d, "chart-bars.dat")
    with open(bars, "w") as f:
        f.write("# skew hdd ssd tierd lvmcache bcache oracle\n")
        for skew in SKEW_ORDER:
            ssd = res.summary("ssd", "rr4k", skew)
            hdd = res.summary("hdd", "rr4k", skew)
            if not ssd or not hdd:
                continue
            vals = [hdd[0], ssd[0]]
            for cfg in ("tierd", "lvmcache", "bcache"):
                a = table_a.get((cfg, skew))
                vals.append(a["xs"] * ssd[0] if a and a["xs"] else 0)
            vals.append(oracle.get(skew, 0))
            label = {"z100": "zoned 100/0", "z90": "zoned 90/10", "zipf": "zipf 1.2"}[skew]
            f.write(f'"{label}" ' + " ".join(f"{v:.0f}" for v in vals) + "\n")
    curves = []
    for skew in ("z90", "zipf"):
        p = os.path.join(d, f"chart-ttb-{skew}.dat")
        has_auto = False
        with open(p, "w") as f:
            for cfg in ("tierd", "lvmcache", "bcache", "auto"):
                f.write(f"# {cfg}\n")
                for t, v in slices(os.path.join(d, "raw", f"warm-{cfg}-rr4k-{skew}.slices")):
                    f.write(f"{t:.1f} {v:.0f}\n")
                    has_auto = has_auto or cfg == "auto"
                f.write("\n\n")
        ssd = res.summary("ssd", "rr4k", skew)
        hdd = res.summary("hdd", "rr4k", skew)
        curves.append((skew, p, ssd[0] if ssd else 0, hdd[0] if hdd else 0, oracle.get(skew, 0),
                       has_auto))
    # BENCH_CHART_PNG=1: a PNG preview beside the SVG.
    png = os.environ.get("BENCH_CHART_PNG") == "1"
    term = (f"set terminal pngcairo size 1200,420 font 'sans,9'\nset output '{os.path.join(d, 'benchmarks.png')}'" if png else
            f"set terminal svg size 1200,420 dynamic font 'sans,11' background rgb 'white'\nset output '{os.path.join(d, 'benchmarks.svg')}'")
    gp = f"""
{term}
set multiplot layout 1,3
set title '4K random read IOPS, QD16'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key outside bottom center horizontal maxrows 2 font ',9'
set grid ytics
set logscale y
set yrange [300:*]
set xtics font ',8'
plot '{bars}' using 2:xtic(1) title 'HDD-only' lc rgb '#8c564b', \\
     '' using 3 title 'SSD-only' lc rgb '#2ca02c', \\
     '' using 4 title 'tierd' lc rgb '#1f77b4', \\
     '' using 5 title 'lvmcache' lc rgb '#ff7f0e', \\
     '' using 6 title 'bcache' lc rgb '#9467bd', \\
     '' using 7 title 'oracle bound' lc rgb '#333333' fs pattern 4
unset logscale y
set key inside top left vertical maxrows 6 font ',8'
set yrange [0:*]
set style data linespoints
set xlabel 'seconds from a cold start'
set ylabel 'IOPS per 5 s slice'
"""
    for skew, p, ssd, hdd, orc, has_auto in curves:
        # tierd under schedule auto, where the run has it: no tier now, from the same cold start.
        auto = "     '' index 3 title 'tierd, auto' lc rgb '#17becf' lw 2, \\\n" if has_auto else ""
        gp += f"""
set title 'Time-to-benefit, {SKEWS[skew]}'
set xrange [0:{warm}]
plot '{p}' index 0 title 'tierd, tier now' lc rgb '#1f77b4' lw 2, \\
{auto}     '' index 1 title 'lvmcache' lc rgb '#ff7f0e' lw 2, \\
     '' index 2 title 'bcache' lc rgb '#9467bd' lw 2, \\
     {ssd} title 'SSD-only' with lines lc rgb '#2ca02c' dt 2, \\
     {hdd} title 'HDD-only' with lines lc rgb '#8c564b' dt 2, \\
     {orc} title 'oracle' with lines lc rgb '#333333' dt 3
"""
    gp += "unset multiplot\n"
    subprocess.run(["gnuplot"], input=gp, text=True, check=True)


if __name__ == "__main__":
    main()
