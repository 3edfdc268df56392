#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What placement finer than an extent can buy, before any of it is built.

For each skew of bench-compare (fio's own generator, replayed with the null
engine, as its report does for the oracle) and each unit of placement, the
hottest SSD-sized set of units chosen on one half of the I/Os, measured on
the other half:

  share     of the I/Os that land in that set
  bound     what a tiered volume with that set on the SSD could serve, over
            SSD-only: min(1, 1 / (ratio * miss)), ratio being SSD-only's IOPS
            over HDD-only's (bench-compare's oracle, at that unit)
  of 4K     that bound over the same bound at 4 KiB
  targets   the linear targets of a table that maps that set to the SSD and
            the rest to the HDD (neighbouring hot units merge)

Usage: granularity.py [--size-mb 352] [--ssd-mb 96] [--ratio 27]
                      [--skews zipf z90] [--units-kib 4 16 32 64 128 256 1024 4096]
The defaults are bench-compare's volume and SSD, and the SSD/HDD ratio of
its run on a quiet host.
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare"))
import report  # noqa: E402


def table_targets(hot, nr_units):
    """Targets of a table mapping the units in HOT to one device and the
    rest to another: one per maximal run of either."""
    if not hot:
        return 1
    hot = sorted(hot)
    runs = 1 + sum(1 for a, b in zip(hot, hot[1:]) if b != a + 1)
    gaps = runs - 1 + (hot[0] > 0) + (hot[-1] < nr_units - 1)
    return runs + gaps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=352)
    ap.add_argument("--ssd-mb", type=int, default=96)
    ap.add_argument("--ratio", type=float, default=27.0)
    ap.add_argument("--skews", nargs="+", default=["zipf", "z90"])
    ap.add_argument("--units-kib", nargs="+", type=int,
                    default=[4, 16, 32, 64, 128, 256, 1024, 4096])
    a = ap.parse_args()
    if not shutil.which("fio"):
        sys.exit("granularity.py: fio is not installed")
    units = [k << 10 for k in a.units_kib]
    cap = a.ssd_mb << 20
    tmp = tempfile.mkdtemp(prefix="granularity.")
    print(f"{a.size_mb} MiB volume, the hottest {a.ssd_mb} MiB on the SSD, "
          f"SSD-only = {a.ratio:g}x HDD-only\n")
    print("| skew | unit | share | miss | bound | of 4K | targets |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    try:
        for skew in a.skews:
            counts = report.unit_counts(skew, a.size_mb, "4k", tmp, units)
            if counts is None:
                sys.exit(f"granularity.py: cannot replay skew {skew}")
            bounds = {}
            for u in units:
                hot, share = report.hot_units(counts, u, cap)
                miss = 1 - share
                bounds[u] = min(1.0, 1 / (a.ratio * miss)) if miss > 1e-9 else 1.0
                nr_units = (a.size_mb << 20) // u
                print(f"| {report.SKEWS[skew]} | {u >> 10} KiB | {share:.1%} | {miss:.1%} | "
                      f"{bounds[u]:.2f}x SSD | {bounds[u] / bounds[units[0]]:.0%} | "
                      f"{table_targets(hot, nr_units):,} |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
