#!/usr/bin/env python3
"""Purpose: bench/timing_speedups.sh's table: per cell (model, global batch, GPU count) each --timing mode's speedup,
the mean over the passes with its 95% t-interval over them (each pass a process of its own: the unit of
replication), and the mode's ratio to the default mode's speedup of the same pass, mean and interval likewise. The
speedups are mgpu_analyze's (report --format json of each pass's file), never computed here. A mode moves a speedup
when its ratio's interval lies wholly outside 1 +- 2% (the verdict's minimum effect); exits 1 when one does.

Usage: python3 bench/timing_speedup_table.py --modes "interleaved step events none" --passes 3 DIR
"""
import argparse
import json
import math
import pathlib
import statistics
import sys

MINIMUM_EFFECT = 0.02  # the verdict's (docs/statistics.md)
# Student t(0.975, df) for df = 1..10; more passes than 11 use the normal quantile's neighbour at df 10.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def mean_interval(values):
    """(mean, low, high) with the t-interval over the values; no interval below two."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None, None
    half = T975[min(len(values) - 1, len(T975)) - 1] * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def speedups(path):
    """{(model, global batch, gpus): speedup} of one pass's report."""
    rows = json.loads(path.read_text())["tables"]["scaling"]["rows"]
    return {(r["model"], r["global_batch"], r["gpus"]): r["speedup"] for r in rows}


def text(mean, low, high, digits=3):
    interval = f" [{low:.{digits}f}, {high:.{digits}f}]" if low is not None else " (one pass)"
    return f"{mean:.{digits}f}{interval}"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", required=True)
    parser.add_argument("--passes", type=int, required=True)
    parser.add_argument("dir", type=pathlib.Path)
    args = parser.parse_args(argv)
    modes = args.modes.split()
    default = modes[0]
    measured = {m: [] for m in modes}  # mode -> [speedups of each pass that has its file]
    for p in range(1, args.passes + 1):
        for m in modes:
            report = args.dir / f"timing_{m}_p{p}.json"
            measured[m].append(speedups(report) if report.exists() else {})
    cells = sorted(set().union(*(s.keys() for s in measured[default])))
    print(f"| model | global batch | GPUs | mode | speedup (mean over passes [95%]) | ratio to {default} [95%] | moved |")
    print("|---|---|---|---|---|---|---|")
    moved = []
    for cell in cells:
        for m in modes:
            values = [s[cell] for s in measured[m] if cell in s]
            if not values:
                print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {m} | not measured | | |")
                continue
            ratios = [s[cell] / d[cell] for s, d in zip(measured[m], measured[default]) if cell in s and cell in d]
            if m == default or not ratios:
                print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {m} | {text(*mean_interval(values))} | | |")
                continue
            ratio, low, high = mean_interval(ratios)
            beyond = low is not None and (low > 1 + MINIMUM_EFFECT or high < 1 - MINIMUM_EFFECT)
            if beyond:
                moved.append(f"{cell[0]} {cell[1]} on {cell[2]}: {m}")
            print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {m} | {text(*mean_interval(values))} | "
                  f"{text(ratio, low, high, 4)} | {'yes' if beyond else 'no'} |")
    print()
    print("moved beyond 2%: " + ("; ".join(moved) if moved else "none"))
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
