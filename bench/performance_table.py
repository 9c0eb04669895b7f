#!/usr/bin/env python3
"""Purpose: docs/performance.md's table from the results of one bench/performance.sh run: for each figure of the
issue's targets, the floor (bytes moved / measured copy bandwidth, FLOPs / measured matrix rate, kernel count x
measured graph-node cost; for 2 GPUs also the standalone all-reduce of the gradient), our measurement and the PyTorch
peer's, and whether the target is met. The statistics (the outlier screen, kept runs, means, intervals, speedups) are
mgpu_analyze's (`report --format json`, bench/report_json.py); h5py reads the attributes, the probe and the sweep.

Usage: python3 bench/performance_table.py [--analyze MGPU_ANALYZE] RESULTS_DIR > table.md
RESULTS_DIR holds tools.h5 (/probe, /allreduce), ours_<name>.h5 (bench/performance.sh's names), peer_graph.h5 and
peer_ddp.h5; a missing file leaves its cells as "not run".
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import report_json  # noqa: E402  (bench/: the analyzer's statistics)
import results_h5  # noqa: E402  (bench/peers/: the model presets, shared with the PyTorch peer)
import step_floor  # noqa: E402  (bench/: the floor of a step)

PRESETS = {model: widths for model, (widths, _dropout) in results_h5.PRESETS.items()}  # model -> layer widths
ANALYZE = None  # mgpu_analyze, from the command line (report_json's default otherwise)


class Measured:
    """One configuration: its attributes (h5py) and the analyzer's statistics of it (report_json.Statistics)."""

    def __init__(self, path, group, statistics):
        self.path = path
        self.name = group.name.rsplit("/", 1)[1]
        self.attrs = dict(group.attrs)
        self.statistics = statistics
        self.implementation = str(group.attrs.get("implementation", "mgpu_bench"))
        # Wall time per measured step (schema v2): max over ranks per run, mean over the runs the analyzer kept; None
        # for a file without it or with nothing measured (NaN).
        self.wall_ms = None
        runs = int(group.attrs["runs_completed"])
        if "wall_per_step_ms" in group and statistics.kept_runs:
            wall = group["wall_per_step_ms"][:runs].max(axis=1)[statistics.kept_runs]
            self.wall_ms = None if np.all(np.isnan(wall)) else float(np.nanmean(wall))

    def wall_mean(self):
        return self.wall_ms

    def attr(self, name, default):
        """A configuration attribute as text; a v1 file's default for one it lacks."""
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else str(value)

    def variant(self):
        """How the step ran, in words: "graph on, overlap off" ("overlap on (deferred)" with its order, v5 files; older
        ones overlapped layerwise; ", fused optimizer on" when it was; v4 files; ", timing step" for a run that marked
        only each step's start and end; ", GEMMs tuned alone" or ", GEMMs tuned in the step" from v6 files, whose
        gemm_tuning says which)."""
        fused = ", fused optimizer on" if self.attr("fused_optimizer", "off") == "on" else ""
        marks = ", timing step" if self.attr("timing", "events") == "step" else ""
        tuning = {"alone": ", GEMMs tuned alone", "step": ", GEMMs tuned in the step"}.get(
            self.attr("gemm_tuning", "n/a"), "") if "gemm_tuning" in self.attrs else ""
        marks += tuning
        overlap = self.attr("overlap", "off")
        if overlap == "on":
            overlap += f" ({self.attr('overlap_order', 'layerwise')})"
        return f"graph {self.attr('graph', 'off')}, overlap {overlap}{fused}{marks}"

    def throughput(self):
        return self.statistics.samples_per_s

    def mean(self, phase="step"):
        """The mean step (over the kept runs) or phase, ms; None for a phase the runs did not measure."""
        return self.statistics.step_ms if phase == "step" else self.statistics.phase_ms.get(phase)

    def text(self, phase="step"):
        """"0.1169 ms" for a phase; for the step, with the throughput's 95% interval over the kept runs where there is
        one, "0.1169 ms (273,626 ± 116 samples/s)", else the kept runs: "0.0747 ms (1,713,130 samples/s; 4 kept runs,
        too few runs)"."""
        value = self.mean(phase)
        if value is None:
            return "n/a"
        if phase != "step":
            return f"{value:.4f} ms"
        s = self.statistics
        if s.samples_per_s_ci95 is not None:
            return f"{value:.4f} ms ({s.samples_per_s:,.0f} ± {s.samples_per_s_ci95:,.0f} samples/s)"
        return f"{value:.4f} ms ({s.samples_per_s:,.0f} samples/s; {s.runs_kept} kept runs, too few runs)"


def load_all(path):
    """Every configuration of a results file, {name: Measured} in the file's order; empty if the file is absent."""
    if not os.path.exists(path):
        return {}
    report = report_json.Report([path], ANALYZE)
    with h5py.File(path, "r") as f:
        groups = f["configurations"]
        return {name: Measured(path, groups[name], report.of(path, name)) for name in groups}


def load_one(path):
    """The configuration of an ours_*.h5 file (its only one); None if absent."""
    found = load_all(path)
    return next(iter(found.values())) if found else None


def speedup_of(one, many):
    """The answer's speedup of `many` (N GPUs) over `one` (its 1-GPU baseline): the scaling row of the report of both
    files, or None where they do not pair (other settings)."""
    return report_json.Report([one.path, many.path], ANALYZE).pairs.get(many.name)


class Tools:
    """/probe (step_floor.ProbeRates) and /allreduce of tools.h5: medians over runs."""

    def __init__(self, path):
        self.ok = os.path.exists(path)
        if not self.ok:
            return
        with h5py.File(path, "r") as f:
            self.rates = step_floor.ProbeRates(f["probe"])
            self.copy_gbps, self.peak_tflops, self.launch_ms = (self.rates.copy_gbps, self.rates.peak_tflops,
                                                                self.rates.launch_ms)
            a = f["allreduce"]
            self.ar_ranks = int(a.attrs["ranks"])
            self.ar_labels = [str(x) for x in a.attrs["size_labels"]]
            self.ar_bytes = a["bytes"][()]
            self.ar_each_ms = np.median(a["op_ms"][()].max(axis=1), axis=0)      # one at a time
            self.ar_batched_ms = np.median(a["time_ms"][()].max(axis=1), axis=0)  # back-to-back (nccl-tests)

    def allreduce(self, model):
        """(one-at-a-time ms, back-to-back ms, bytes) of the model's gradient."""
        i = self.ar_labels.index(f"{model} gradient")
        return float(self.ar_each_ms[i]), float(self.ar_batched_ms[i]), int(self.ar_bytes[i])

    def busbw(self, nbytes, ms):
        return nbytes / (ms * 1e-3) / 1e9 * 2 * (self.ar_ranks - 1) / self.ar_ranks


def floor(tools, model, global_batch, ranks, precision="fp32"):
    """The step's floor (bench/step_floor.py) at the local batch, with 2 GPUs bounded by the standalone all-reduce of
    the gradient (one at a time) too: (ms, "0.0660 ms (bytes: ...)")."""
    allreduce = tools.allreduce(model)[0] if ranks > 1 else None
    ms, bound, detail = step_floor.floor(tools.rates, model, PRESETS[model], global_batch // ranks, ranks, precision,
                                         allreduce)
    return ms, f"{ms:.4f} ms ({bound}: {detail})"


def over_floor(tools, mine, model, batch, ranks, precision="fp32"):
    """"1.77×": our step ÷ the floor of its cell; "not run" without either."""
    if not (tools.ok and mine):
        return "not run"
    return f"{mine.mean() / floor(tools, model, batch, ranks, precision)[0]:.2f}×"


def variants(ours, model, batch, ranks, precision="fp32", grad_dtype="fp32", timings=("events",)):
    """(file name, Measured) of every run of ours of this model, global batch and GPU count in the given precision and
    gradient type, one update per step, timed in one of `timings`: "events" (every phase) by default; "step" (each
    step's start and end only, no phases) where only the step time counts; --timing none runs are no step-time figure
    (no per-step events)."""
    return [(name, m) for name, m in ours.items() if m and m.attr("model", "") == model
            and int(m.attrs.get("global_batch", 0)) == batch and int(m.attrs.get("ranks", 0)) == ranks
            and m.attr("precision", "fp32") == precision and m.attr("grad_dtype", "fp32") == grad_dtype
            and m.attr("timing", "events") in timings and int(m.attrs.get("accumulate_steps", 1)) == 1]


def best(ours, model, batch, ranks, **kind):
    """The fastest (lowest mean step) variant, or (None, None)."""
    found = variants(ours, model, batch, ranks, **kind)
    return min(found, key=lambda item: item[1].mean()) if found else (None, None)


# A step time is measured by runs with every phase marked and by runs with only each step's boundaries marked (each
# mark costs the step a few microseconds); the faster is the figure, and its name says which it was.
STEP_TIMINGS = ("events", "step")


def verdict(ok):
    return "not run" if ok is None else ("**met**" if ok else "**missed**")


def main(argv):
    global ANALYZE
    ANALYZE, directory = report_json.table_arguments(argv, __doc__)
    tools = Tools(os.path.join(directory, "tools.h5"))
    ours = {name[5:-3]: load_one(os.path.join(directory, name)) for name in sorted(os.listdir(directory))
            if name.startswith("ours_") and name.endswith(".h5")}
    peers = {filename: load_all(os.path.join(directory, filename)) for filename in ("peer_graph.h5", "peer_ddp.h5")}
    peer_graph = lambda m, b: peers["peer_graph.h5"].get(f"{m}_b{b}_n1_pytorch-graph")  # noqa
    peer_ddp = lambda m, b: peers["peer_ddp.h5"].get(f"{m}_b{b}_n2_pytorch-ddp")  # noqa
    rows = []

    def step_row(figure, target_ms, model, batch, ranks, peer):
        # The target figure: the fastest fp32 variant measured (named); bf16 on lines of its own below it.
        name, mine = best(ours, model, batch, ranks, timings=STEP_TIMINGS)
        floor_text = floor(tools, model, batch, ranks)[1] if tools.ok else "not run"
        value = mine.mean() if mine else None
        rows.append((figure, f"≤ {target_ms} ms", floor_text,
                     f"{mine.text()} ({mine.variant()}: {name})" if mine else "not run",
                     over_floor(tools, mine, model, batch, ranks),
                     peer.text() if peer else "not run", verdict(None if value is None else value <= target_ms)))
        for grad_dtype in ("fp32", "bf16"):
            if grad_dtype == "bf16" and ranks == 1:
                continue
            bf16_name, bf16 = best(ours, model, batch, ranks, precision="bf16", grad_dtype=grad_dtype)
            if bf16:
                what = "bf16 GEMMs" + (", bf16 all-reduce" if grad_dtype == "bf16" else "")
                rows.append((f"{figure}, {what} (not the fp32 target figure)", f"(≤ {target_ms} ms in fp32)",
                             floor(tools, model, batch, ranks, "bf16")[1] if tools.ok else "not run",
                             f"{bf16.text()} ({bf16.variant()}: {bf16_name})",
                             over_floor(tools, bf16, model, batch, ranks, "bf16"), "n/a",
                             "for comparison" if value is None else
                             f"for comparison: {value / bf16.mean():.2f}x the fp32 figure's speed"))

    step_row("large, batch 32, 1 GPU, step", 0.12, "large", 32, 1, peer_graph("large", 32))
    step_row("medium, batch 64, 1 GPU, step", 0.04, "medium", 64, 1, peer_graph("medium", 64))
    step_row("large, batch 32, 2 GPUs, step", 0.20, "large", 32, 2, peer_ddp("large", 32))

    # In-step all-reduce against the standalone one of the same bytes (one at a time: the step's way of timing it).
    # The in-step all-reduce of the fastest variant without overlap (one reduction of the whole gradient).
    no_overlap = [(name, m) for name, m in variants(ours, "large", 32, 2) if m.attr("overlap", "off") == "off"]
    mine = min(no_overlap, key=lambda item: item[1].mean())[1] if no_overlap else None
    if tools.ok and mine and mine.mean("allreduce"):
        each, batched, nbytes = tools.allreduce("large")
        in_step = tools.busbw(nbytes, mine.mean("allreduce"))
        standalone = tools.busbw(nbytes, each)
        ratio = in_step / standalone
        rows.append(("in-step all-reduce bus bandwidth (large gradient, 27.5 MB)", "≥ 90% of standalone",
                     f"standalone {standalone:.1f} GB/s one at a time ({each * 1e3:.1f} us), "
                     f"{tools.busbw(nbytes, batched):.1f} GB/s back-to-back",
                     f"{in_step:.1f} GB/s ({mine.mean('allreduce') * 1e3:.1f} us) = {100 * ratio:.0f}%", "n/a",
                     verdict(ratio >= 0.9)))
    else:
        rows.append(("in-step all-reduce bus bandwidth", "≥ 90% of standalone", "not run", "not run", "n/a",
                     verdict(None)))

    # Exposed communication where backward >= all-reduce (large batches on 2 GPUs, overlap on). The all-reduce's own
    # time is the standalone one of the same bytes (one at a time): the in-step allreduce phase, with overlap, spans
    # from the first bucket's launch to the last one's completion, backward included. Reported as a share of both;
    # the verdict takes the strict reading (share of the standalone time).
    exposed_rows = False
    for batch in (1024, 4096):
        # The overlapped variant that hides the most (lowest exposed_comm; e.g. the two --overlap-order), named with
        # its step time, so a variant that hides more but runs slower shows as such.
        overlapped = [(name, m) for name, m in variants(ours, "large", batch, 2)
                      if m.attr("overlap", "off") == "on" and m.mean("allreduce")]
        name, mine = min(overlapped, key=lambda item: item[1].mean("exposed_comm")) if overlapped else (None, None)
        if mine and mine.mean("allreduce") and tools.ok:
            exposed_rows = True
            standalone = tools.allreduce("large")[0]
            backward, phase, exposed = mine.mean("backward"), mine.mean("allreduce"), mine.mean("exposed_comm")
            of_phase, of_standalone = exposed / phase, exposed / standalone
            applies = backward >= standalone
            rows.append((f"exposed communication, large, batch {batch}, 2 GPUs ({name}: {mine.variant()}, "
                          f"step {mine.mean():.4f} ms)",
                         "≤ 25% of the all-reduce",
                         f"0 (backward {backward:.4f} ms {'≥' if applies else '<'} standalone all-reduce "
                         f"{standalone:.4f} ms)",
                         f"{exposed:.4f} ms = {100 * of_standalone:.0f}% of the standalone all-reduce; "
                         f"{100 * of_phase:.0f}% of the in-step all-reduce phase {phase:.4f} ms "
                         f"(overlap {100 * (1 - of_phase):.0f}%)", "n/a",
                         verdict(of_standalone <= 0.25) if applies else "n/a (backward < all-reduce)"))
        else:
            rows.append((f"exposed communication, large, batch {batch}, 2 GPUs", "≤ 25% of the all-reduce",
                         "not run", "not run", "n/a", verdict(None)))

    for batch, target in ((1024, 1.0), (4096, 1.8)):
        (one_name, one), (two_name, two) = best(ours, "large", batch, 1), best(ours, "large", batch, 2)
        pair = speedup_of(one, two) if one and two else None
        if pair:
            speedup = pair["speedup"]
            interval = f" [{pair['speedup_low']:.2f}, {pair['speedup_high']:.2f}]" if pair["speedup_low"] else ""
            ideal = floor(tools, "large", batch, 1)[0] / floor(tools, "large", batch, 2)[0] if tools.ok else None
            rows.append((f"large, 2 GPUs, speedup over 1 GPU, global batch {batch}",
                         ("> 1" if target == 1.0 else f"≥ {target}"),
                         f"{ideal:.2f} (ratio of the floors)" if ideal else "not run",
                         f"{speedup:.2f}{interval} ({two.throughput():,.0f} / {one.throughput():,.0f} samples/s; "
                         f"2 GPUs {two.variant()}: {two_name}; 1 GPU {one.variant()}: {one_name})",
                         "n/a", verdict(speedup > target if target == 1.0 else speedup >= target)))
        elif one and two:
            rows.append((f"large, 2 GPUs, speedup, global batch {batch}", f"≥ {target}", "not run",
                         f"not paired: {two_name} and {one_name} differ in a setting the scaling pairs on", "n/a",
                         verdict(None)))
        else:
            rows.append((f"large, 2 GPUs, speedup, global batch {batch}", f"≥ {target}", "not run", "not run", "n/a",
                         verdict(None)))

    # Instrumentation overhead: wall time per measured step (first measured step's start -> last one's end, launch
    # gaps included; max over ranks, mean over kept runs) of the timed run over the --timing none run's, minus 1.
    # The same clock on both sides: the event step times of the timed run leave out the gaps between steps.
    timed, untimed = ours.get("large_b32_n1"), ours.get("large_b32_n1_untimed")
    figure = "timing instrumentation overhead (large, batch 32, 1 GPU, graph replay)"
    if timed and untimed and timed.wall_mean() and untimed.wall_mean():
        overhead = timed.wall_mean() / untimed.wall_mean() - 1
        rows.append((figure, "≤ 3%", "0",
                     f"{100 * overhead:+.1f}% (wall per measured step {timed.wall_mean():.4f} ms timed vs "
                     f"{untimed.wall_mean():.4f} ms untimed)", "n/a", verdict(overhead <= 0.03)))
    elif timed and untimed:
        rows.append((figure, "≤ 3%", "0", "n/a (the files lack wall_per_step_ms: written before the dataset existed)",
                     "n/a", "n/a"))
    else:
        rows.append((figure, "≤ 3%", "0", "not run", "n/a", verdict(None)))

    # Ours against the peer at every common configuration with batch <= 1024.
    pairs = [("large", 32, 1, peer_graph), ("medium", 64, 1, peer_graph), ("large", 1024, 1, peer_graph),
             ("large", 32, 2, peer_ddp), ("large", 1024, 2, peer_ddp)]
    comparisons, all_faster = [], True
    for model, batch, ranks, peer_of in pairs:
        mine, peer = best(ours, model, batch, ranks, timings=STEP_TIMINGS)[1], peer_of(model, batch)
        if mine and peer:
            ratio = peer.mean() / mine.mean()
            all_faster &= ratio > 1
            comparisons.append(f"{model} b{batch} n{ranks}: {ratio:.1f}x")
    rows.append(("PyTorch peer, same machine, same call", "ours faster at every batch ≤ 1024",
                 "—", "; ".join(comparisons) or "not run", "(peer step ÷ our step)",
                 verdict(all_faster if comparisons else None)))

    print("| figure | target | floor | ours | ours ÷ floor | PyTorch peer | target |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        # Rows that are no step figure have no ours ÷ floor.
        cells = row if len(row) == 7 else row[:4] + ("—",) + row[4:]
        print("| " + " | ".join(cells) + " |")
    print()
    print("Step and speedup rows: the fastest fp32 variant measured of that model, batch and GPU count (named); bf16 "
          "rows for comparison only; a step row's figure may come from a `--timing step` run (only the steps' "
          "boundaries marked), named so. Overhead: wall time per measured step, timed ÷ `--timing none` − 1.")
    if exposed_rows:
        print("Exposed communication: the share of the standalone all-reduce of the same bytes (one at a time) is the "
              "verdict (the strict reading: ≤ 25% of the all-reduce's own time); the share of the in-step all-reduce "
              "phase (first bucket launched → last complete, overlapped with backward) is 100 − "
              "overlap%.")
    print()
    if tools.ok:
        print(f"Measured on this machine in the same call: streaming copy {tools.copy_gbps:,.0f} GB/s (read + write); "
              "peak GEMM " + ", ".join(f"{p} {r:,.0f} TFLOP/s" for p, r in tools.peak_tflops.items()) +
              "; empty kernel: " + ", ".join(f"{k} {v * 1e3:.2f} us" for k, v in tools.launch_ms.items()) + ".")
        for model in PRESETS:
            each, batched, nbytes = tools.allreduce(model)
            print(f"Standalone all-reduce of the {model} gradient ({nbytes:,} B, {tools.ar_ranks} GPUs): "
                  f"{each * 1e3:.1f} us one at a time ({tools.busbw(nbytes, each):.1f} GB/s bus), "
                  f"{batched * 1e3:.1f} us back-to-back ({tools.busbw(nbytes, batched):.1f} GB/s bus).")
        print()
    print("| configuration | implementation | runs kept (excluded) | step (samples/s ± 95% CI) | forward | backward | "
          "all-reduce | exposed | optimizer | samples/s | wall per step |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    everything = [(f"ours_{name}", m) for name, m in ours.items() if m]
    for configurations in peers.values():
        everything += list(configurations.items())
    for name, m in everything:
        cells = [m.text(p) for p in ("step", "forward", "backward", "allreduce", "exposed_comm", "optimizer")]
        wall = "n/a" if m.wall_mean() is None else f"{m.wall_mean():.4f} ms"
        s = m.statistics
        print(f"| {name} | {m.implementation} | {s.runs_kept} ({s.runs_total - s.runs_kept}) | " + " | ".join(cells) +
              f" | {m.throughput():,.0f} | {wall} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
