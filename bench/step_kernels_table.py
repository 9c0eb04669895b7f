#!/usr/bin/env python3
"""Purpose: bench/step_kernels.sh's table: one step's kernels per cell, from an Nsight Compute profile of a run's
steps (its totals over the steps profiled), beside the step's mean time from the plain run, and the share of the
kernels' time that DRAM, the SMs or latency bounds.

Usage: python3 bench/step_kernels_table.py OUT STEPS CELL...   (STEPS: the steps each profile holds; CELL as
       step_kernels.sh names it; OUT holds its files)
"""
import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

# A kernel at this share of a peak or above is bound by that unit; below both, by its latency or its size.
BOUND_PERCENT = 60.0
SHOWN_KERNELS = 10
# What the step graph runs before the step's start mark (the step counter and the next batch: data loading is not part
# of the step, docs/measurement.md): listed apart, left out of the step's kernels.
BEFORE_THE_STEP = re.compile(r"(advance_step|generate_features|generate_targets)_kernel$")


def tag_of(cell):
    return cell.replace("/", "_").replace(":", "_")


def short_name(name):
    """The kernel's name without its parameters, its return type or the inside of long template argument lists."""
    name = re.sub(r"^void ", "", name.split("(")[0] if not name.startswith("(") else name)
    name = re.sub(r"<[^<>]{40,}>", "<…>", name)
    return name[:72]


def number(text):
    """A value as ncu's CSV writes it: thousands grouped with commas."""
    return float(text.replace(",", ""))


def profile(path):
    """Per (kernel, grid): launches, total µs, total DRAM bytes, and the duration-weighted DRAM and SM percentages."""
    rows = [line for line in Path(path).read_text(errors="replace").splitlines() if line.startswith('"')]
    kernels = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0])
    for row in csv.DictReader(rows):
        if not row.get("ID", "").isdigit():
            continue  # the units row
        us = number(row["gpu__time_duration.sum"]) / 1000.0
        entry = kernels[(short_name(row["Kernel Name"]), row["Grid Size"])]
        entry[0] += 1
        entry[1] += us
        entry[2] += number(row["dram__bytes.sum"])
        entry[3] += us * number(row["dram__throughput.avg.pct_of_peak_sustained_elapsed"])
        entry[4] += us * number(row["sm__throughput.avg.pct_of_peak_sustained_elapsed"])
    return kernels


def one_step(out, tag, steps):
    """The kernels of one step: the profile's totals over its `steps`, largest first."""
    kernels = []
    for (name, grid), (n, us, dram, dram_pct, sm_pct) in profile(out / f"{tag}.csv").items():
        kernels.append((name, grid, n / steps, us / steps, dram / steps / 1e6, dram_pct / us, sm_pct / us))
    return sorted(kernels, key=lambda k: -k[3])


def mean_step_us(out, tag):
    found = re.search(r"mean step ([0-9.]+) ms", (out / f"{tag}.txt").read_text(errors="replace"))
    return float(found.group(1)) * 1000.0 if found else None


def bound(dram_pct, sm_pct):
    if dram_pct >= BOUND_PERCENT and dram_pct >= sm_pct:
        return "DRAM"
    if sm_pct >= BOUND_PERCENT:
        return "SM"
    return "latency"


def kernel_rows(kernels):
    rows = []
    for name, grid, launches, us, mb, dram_pct, sm_pct in kernels[:SHOWN_KERNELS]:
        rows.append(f"| `{name}` | {grid} | {launches:.0f} | {us:.1f} | {mb:.2f} | {dram_pct:.0f} | {sm_pct:.0f} | "
                    f"{bound(dram_pct, sm_pct)} |")
    rest = kernels[SHOWN_KERNELS:]
    if rest:
        rows.append(f"| {len(rest)} more | | {sum(k[2] for k in rest):.0f} | {sum(k[3] for k in rest):.1f} | "
                    f"{sum(k[4] for k in rest):.2f} | | | |")
    return rows


def main():
    out = Path(sys.argv[1])
    steps = int(sys.argv[2])
    cells = sys.argv[3:]
    summary = ["| cell | step µs (plain run) | kernels a step | their µs under ncu | DRAM-bound | SM-bound | "
               "latency-bound | before the start mark, µs under ncu |", "|---|---|---|---|---|---|---|---|"]
    details = []
    for cell in cells:
        tag = tag_of(cell)
        try:
            every, step = one_step(out, tag, steps), mean_step_us(out, tag)
        except (OSError, KeyError, ValueError) as error:
            summary.append(f"| {cell} | not measured ({error.__class__.__name__}: {error}) | | | | | | |")
            continue
        kernels = [k for k in every if not BEFORE_THE_STEP.search(k[0])]
        before = sum(k[3] for k in every if BEFORE_THE_STEP.search(k[0]))
        total = sum(k[3] for k in kernels)
        by_bound = defaultdict(float)
        for k in kernels:
            by_bound[bound(k[5], k[6])] += k[3]
        shares = " | ".join(f"{100.0 * by_bound[unit] / total:.0f}%" if total else "—"
                            for unit in ("DRAM", "SM", "latency"))
        step_text = f"{step:.1f}" if step else "—"
        summary.append(f"| {cell} | {step_text} | {sum(k[2] for k in kernels):.0f} | {total:.1f} | {shares} | "
                       f"{before:.1f} |")
        details += [f"\n### {cell}\n", "| kernel | grid | a step | µs under ncu | DRAM MB | DRAM % of peak | "
                    "SM % of peak | bound |", "|---|---|---|---|---|---|---|---|"] + kernel_rows(kernels)
    print("# One GPU's step, kernel by kernel (Nsight Compute)\n")
    print(f"The kernels of one step: a profile of {steps} steps, its totals over {steps}, without those the step graph "
          "runs before its start mark (the step counter and the next batch). \"bound\": the unit at "
          f"{BOUND_PERCENT:.0f}% of its peak or more (DRAM or SM), else latency (neither); the shares are of the "
          "step's kernel time under ncu. ncu runs each kernel alone, after a pause, at the clock the GPU has then: a "
          "short kernel reads longer than in the step, where it overlaps its neighbours' launch, so the sums exceed "
          "the step and the shares, not the sums, say what bounds it. The step's mean: a plain run of 3 × 30 steps, "
          "`--timing step`.\n")
    print("\n".join(summary + details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
