#!/usr/bin/env python3
"""Purpose: the tables of one bench/large_batch_performance.sh call, as Markdown: for each model and global batch, our
step against the strongest PyTorch step (the fastest of the graph-captured peers; eager DDP beside it), the sum of our
GEMMs' times alone (from each configuration's gemm_choices), TFLOP/s per GPU (the step's FLOPs at the local batch,
step_floor.step_flops, / step; the probe's fp32 GEMM peak, which no rate can pass, stated above the tables) and
whether each target holds; then Nsight Compute's per-kernel table of our own kernels (DRAM bytes, time, fraction of the
measured copy bandwidth). The statistics (kept runs, mean steps, the answer's speedups) are mgpu_analyze's, as
bench/performance_table.py reads them (report --format json); h5py reads the attributes and the probe.

Usage: python3 bench/large_batch_table.py [--analyze MGPU_ANALYZE] RESULTS_DIR > table.md
RESULTS_DIR holds ours.h5 (one mgpu_bench sweep), optionally ours_1gpu.h5 (batch 4096 on one GPU, for the speedup of
a run on several), ours_base.h5 (the same sweep by an earlier build), ab_new_<round>.h5 and ab_base_<round>.h5,
peer_graph.h5, peer_graph_dp.h5, peer_ddp.h5, probe.h5 and ncu_<model>_b<batch>.csv; a missing file leaves its cells
as "not run". Exits 1 when a measured target is missed.
"""
import csv
import glob
import os
import re
import sys

import h5py
import numpy as np

import performance_table as pt  # bench/: Measured (the analyzer's statistics), speedup_of, presets
import step_floor  # bench/: the step's FLOP count and the probe's rates

TARGET_PEER_RATIO = 0.9  # our step <= 0.9 x the strongest PyTorch step
TARGET_GEMM_RATIO = 1.10  # at batch >= GEMM_TARGET_BATCH: our step <= 1.10 x the sum of its GEMMs alone
GEMM_TARGET_BATCH = 1024
TARGET_PEAK_SHARE = {("large", 4096): 0.9}  # on 1 GPU: TFLOP/s >= this share of the probe's fp32 GEMM peak
TARGET_SPEEDUP = {("large", 4096): 1.85}  # on 2 GPUs: the answer's speedup over the one-GPU run (docs/statistics.md)
SMALL_BATCH_SLOWDOWN_PERCENT = 2.0  # no small-batch figure slower than the earlier build's by more than 2%
COPY_FRACTION = 0.7  # every kernel of ours at >= 70% of the copy bandwidth for its bytes, or at the launch floor
ALONE = re.compile(r"\(([0-9.]+) us alone")


def configurations(path):
    """{(model, global_batch, ranks): Measured} of every configuration in a results file (empty if absent)."""
    found = {}
    for name, measured in pt.load_all(path).items():
        key = (measured.attr("model", "?"), int(measured.attrs["global_batch"]), int(measured.attrs["ranks"]))
        found[key] = measured
    return found


def gemm_sum_ms(measured):
    """The sum of the per-shape times alone recorded in gemm_choices (each shape runs once per step), in ms."""
    times = [float(t) for t in ALONE.findall(measured.attr("gemm_choices", ""))]
    return sum(times) / 1e3 if times else None


def copy_gbps(directory):
    """The probe's streaming copy bandwidth (read + write, GB/s) and its graph-node cost (us), or defaults."""
    path = os.path.join(directory, "probe.h5")
    if not os.path.exists(path):
        return None, None
    with h5py.File(path, "r") as f:
        p = f["probe"]
        copy_bytes = p["copy_bytes"][()]
        copy_ms = np.median(p["copy_ms"][()], axis=0)
        gbps = 2 * copy_bytes / (copy_ms * 1e-3) / 1e9
        launches = dict(zip([str(x) for x in p.attrs["launch_labels"]], np.median(p["launch_ms"][()], axis=0)))
        return float(gbps[copy_bytes >= pt.STREAMING_COPY_BYTES].max()), float(launches["graph_node"]) * 1e3


def fmt(value, digits=4):
    return "not run" if value is None else f"{value:.{digits}f}"


def verdict(ok):
    return "not run" if ok is None else ("met" if ok else "**missed**")


def fp32_peak(directory):
    """The probe's fp32 GEMM peak in TFLOP/s (step_floor.ProbeRates), or None without a probe."""
    path = os.path.join(directory, "probe.h5")
    if not os.path.exists(path):
        return None
    with h5py.File(path, "r") as f:
        return step_floor.ProbeRates(f["probe"]).peak_tflops.get("fp32") if "gemm_ms" in f["probe"] else None


def step_table(directory, ranks):
    ours = configurations(os.path.join(directory, "ours.h5"))
    base = configurations(os.path.join(directory, "ours_base.h5"))
    graph = configurations(os.path.join(directory, "peer_graph.h5"))
    graph_dp = configurations(os.path.join(directory, "peer_graph_dp.h5"))
    ddp = configurations(os.path.join(directory, "peer_ddp.h5"))
    one_gpu = configurations(os.path.join(directory, "ours_1gpu.h5"))
    keys = sorted({k for k in ours if k[2] == ranks}, key=lambda k: (k[0] != "medium", k[1]))
    lines = [f"| model, batch, {ranks} GPU(s) | ours step ms | earlier build ms | strongest PyTorch ms (which) | "
             "eager DDP ms | ours / peer (≤ 0.9) | GEMMs alone ms | ours / GEMMs (≤ 1.10 at ≥ 1024) | TFLOP/s per GPU | "
             "speedup over 1 GPU | targets |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    missed = 0
    peak = fp32_peak(directory)
    for key in keys:
        model, batch, _ = key
        mine = ours[key]
        step = mine.mean()
        peers = [(name, table[key].mean()) for name, table in (("graph", graph), ("graph-dp", graph_dp))
                 if key in table and table[key].mean() is not None]
        peer_name, peer = min(peers, key=lambda item: item[1]) if peers else (None, None)
        gemms = gemm_sum_ms(mine)
        tflops = step_floor.step_flops(pt.PRESETS[model], batch // ranks) / (step * 1e-3) / 1e12
        checks = [step <= TARGET_PEER_RATIO * peer if peer else None]
        if batch >= GEMM_TARGET_BATCH:
            checks.append(step <= TARGET_GEMM_RATIO * gemms if gemms else None)
        if (model, batch) in TARGET_PEAK_SHARE and ranks == 1 and peak:
            checks.append(tflops >= TARGET_PEAK_SHARE[(model, batch)] * peak)
        speedup = None
        single = one_gpu.get((model, batch, 1))
        pair = pt.speedup_of(single, mine) if ranks > 1 and single is not None else None
        if pair:
            speedup = pair["speedup"]
            if (model, batch) in TARGET_SPEEDUP:
                checks.append(speedup >= TARGET_SPEEDUP[(model, batch)])
        measured = [c for c in checks if c is not None]
        missed += sum(1 for c in measured if not c)
        base_text = "not run"
        if key in base and base[key].mean():
            base_text = f"{base[key].mean():.4f} ({100 * (step / base[key].mean() - 1):+.1f}%)"
        gemm_text = "n/a (fused optimizer)" if mine.attr("fused_optimizer", "off") == "on" else fmt(gemms)
        ratio_gemm = f"{step / gemms:.2f}" if gemms and batch >= GEMM_TARGET_BATCH else "n/a"
        lines.append(f"| {model} {batch} | {mine.text()} | {base_text} | "
                     f"{fmt(peer)} ({peer_name or 'not run'}) | {fmt(ddp[key].mean()) if key in ddp else 'not run'} | "
                     f"{f'{step / peer:.2f}' if peer else 'n/a'} | {gemm_text} | {ratio_gemm} | {tflops:.1f} | "
                     f"{'n/a' if speedup is None else f'{speedup:.2f}'} | "
                     f"{verdict(all(measured) if measured else None)} |")
    return lines, missed


def ab_table(directory):
    """Alternating rounds of this build and the earlier one (ab_new_<round>.h5, ab_base_<round>.h5): each round's mean
    step, and the change of the medians over rounds."""
    rounds = sorted(int(p.rsplit("_", 1)[1][:-3]) for p in glob.glob(os.path.join(directory, "ab_new_*.h5")))
    if not rounds:
        return []
    new = [configurations(os.path.join(directory, f"ab_new_{r}.h5")) for r in rounds]
    base = [configurations(os.path.join(directory, f"ab_base_{r}.h5")) for r in rounds]
    lines = [f"Small batches, this build against the earlier one in {len(rounds)} alternating rounds (ms):", "",
             "| model, batch | this build | earlier build | change of the medians (≤ +2%) |", "|---|---|---|---|"]
    for key in sorted(new[0], key=lambda k: (k[0] != "medium", k[1])):
        mine = [c[key].mean() for c in new if key in c]
        theirs = [c[key].mean() for c in base if key in c]
        if not mine or not theirs:
            continue
        change = 100 * (np.median(mine) / np.median(theirs) - 1)
        lines.append(f"| {key[0]} {key[1]} | {', '.join(f'{v:.4f}' for v in mine)} | "
                     f"{', '.join(f'{v:.4f}' for v in theirs)} | {change:+.1f}% "
                     f"{'met' if change <= SMALL_BATCH_SLOWDOWN_PERCENT else '**missed**'} |")
    return lines + [""]


def short_name(name):
    """"void (anonymous namespace)::adam_kernel<4>(float *, ...)" -> "adam_kernel<4>"."""
    match = re.search(r"([A-Za-z_0-9]+(?:<[^()]*>)?)\s*\(", name)
    return match.group(1) if match else name


def kernel_table(directory):
    """Nsight Compute's ncu_<configuration>.csv files: each of our kernels (by name and grid), mean over its calls.
    The launch floor is the time of the step's one-thread kernel (advance_step_kernel) plus 1 us."""
    copy, _ = copy_gbps(directory)
    copy = copy or 4300.0
    tables = {}
    floors = []
    for path in sorted(glob.glob(os.path.join(directory, "ncu_*.csv"))):
        rows = {}
        with open(path, newline="") as handle:
            text = [line for line in handle if line.startswith('"')]  # ncu's own lines (==PROF==) dropped
        for row in csv.DictReader(text):
            name = short_name(row.get("Kernel Name", ""))
            if not row.get("ID", "").isdigit() or "gemm" in name.lower():
                continue
            number = lambda column: float(row[column].replace(",", ""))  # noqa: E731 (ncu groups thousands)
            time_ns = number("gpu__time_duration.sum")
            if name.startswith("advance_step"):
                floors.append(time_ns / 1e3)
                continue
            # Reads from DRAM (the caches were flushed: each input once) and writes as they reach the L2 (a write
            # need not reach DRAM before the kernel ends, so DRAM's count would miss most of them).
            written = (32 * number("lts__t_sectors_op_write.sum") if row.get("lts__t_sectors_op_write.sum")
                       else number("dram__bytes_write.sum"))
            nbytes = number("dram__bytes_read.sum") + written
            rows.setdefault((name, row.get("Grid Size", "")), []).append((time_ns, nbytes))
        tables[os.path.basename(path)[4:-4]] = rows
    floor_us = (float(np.median(floors)) if floors else 2.0) + 1.0
    lines = [f"Our kernels under Nsight Compute (caches flushed before each; bytes read from DRAM + written to the L2, "
             "which on H200 came to 17-25% more than the bytes a kernel must move, so 'of copy' is an upper bound; "
             f"copy bandwidth {copy:.0f} GB/s from the probe; at the launch floor: under {floor_us:.1f} us, the "
             "one-thread advance_step kernel's time + 1 us):", "",
             "| configuration | kernel (grid) | calls | MB | time us | GB/s | of copy | ok |",
             "|---|---|---|---|---|---|---|---|"]
    missed = 0
    for label, rows in tables.items():
        for (name, grid), samples in rows.items():
            time_us = np.mean([s[0] for s in samples]) / 1e3
            megabytes = np.mean([s[1] for s in samples]) / 1e6
            gbps = megabytes * 1e6 / (time_us * 1e-6) / 1e9
            ok = gbps >= COPY_FRACTION * copy or time_us <= floor_us
            missed += 0 if ok else 1
            lines.append(f"| {label} | {name} {grid} | {len(samples)} | {megabytes:.2f} | {time_us:.1f} | {gbps:.0f} | "
                         f"{100 * gbps / copy:.0f}% | {'met' if ok else '**missed**'} |")
    return lines, missed


def main(argv):
    if len(argv) == 4 and argv[1] == "--analyze":
        pt.ANALYZE, argv = argv[2], [argv[0], argv[3]]
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory = argv[1]
    missed = 0
    ours = configurations(os.path.join(directory, "ours.h5"))
    peak = fp32_peak(directory)
    print("TFLOP/s per GPU: the step's GEMM FLOPs at the local batch, 2 B (3 W - W0) for W dense weights of which W0 "
          "are the first layer's (no step computes the input's gradient), over our step; "
          + (f"the probe's fp32 GEMM peak in this call is {peak:.1f} TFLOP/s." if peak else "no probe in this call.")
          + "\n")
    for ranks in sorted({k[2] for k in ours}):
        lines, count = step_table(directory, ranks)
        missed += count
        print("\n".join(lines) + "\n")
    print("\n".join(ab_table(directory)))
    lines, count = kernel_table(directory)
    print("\n".join(lines) + "\n")
    print(f"step targets missed: {missed}; kernels below {int(COPY_FRACTION * 100)}% of copy bandwidth and above the "
          f"launch floor: {count}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
