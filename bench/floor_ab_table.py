#!/usr/bin/env python3
"""Purpose: the table of bench/floor_ab.sh: per cell (precision, model, batch on one GPU) the old build's step, the new
build's, new ÷ old with its 95% interval, the floor (bench/step_floor.py) and the new step ÷ it, the PyTorch peer at
the same precision and the new build's math-check error. The statistics are mgpu_analyze's: each build's mean step
per file from `report --format json`, the ratio and its interval from `compare OLD_1,OLD_2 NEW_1,NEW_2 --format json`
(each pass's process a trial: the answer's interval rule over trial means), inverted from throughput to step time.
tf32x3 has no old build: its cells are held to the old build's fp32 step (compare --ignore-setting precision), the
issue's measure of it.

Usage: python3 bench/floor_ab_table.py [--analyze MGPU_ANALYZE] RESULTS_DIR > table.md
RESULTS_DIR holds probe.h5, {old,new}_{fp32,tf32,bf16}_p<pass>.h5, new_tf32x3_p<pass>.h5 and peer_<precision>.h5
(bench/floor_ab.sh's names); a missing file leaves its cells as "not run".
"""
import glob
import json
import os
import subprocess
import sys

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers"))
import report_json  # noqa: E402  (bench/: the analyzer's statistics)
import results_h5  # noqa: E402  (bench/peers/: the model presets)
import step_floor  # noqa: E402  (bench/: the floor of a step)

PRESETS = {model: widths for model, (widths, _dropout) in results_h5.PRESETS.items()}
# Which old build's files each precision's new cells are compared with.
OLD_OF = {"fp32": "fp32", "tf32": "tf32", "bf16": "bf16", "tf32x3": "fp32"}
ORDER = ("fp32", "tf32x3", "tf32", "bf16")


def files(directory, build, precision):
    return sorted(glob.glob(os.path.join(directory, f"{build}_{precision}_p*.h5")))


def group_cells(report, paths):
    """{(model, batch): [mean step ms of each file]} of the configurations of `paths` (report_json.Report)."""
    cells = {}
    for path in paths:
        with h5py.File(path, "r") as f:
            for name, group in f["configurations"].items():
                statistics = report.of(path, name)
                if statistics is None or not statistics.runs_kept:
                    continue
                model, batch = str(group.attrs["model"]), int(group.attrs["global_batch"])
                cells.setdefault((model, batch), []).append(statistics.step_ms)
    return cells


def math_check_errors(paths):
    """{(model, batch): worst math-check error over the files} of the new build's configurations."""
    errors = {}
    for path in paths:
        with h5py.File(path, "r") as f:
            for group in f["configurations"].values():
                values = group.attrs.get("math_check_errors")
                if values is None or len(values) == 0:
                    continue
                key = (str(group.attrs["model"]), int(group.attrs["global_batch"]))
                errors[key] = max(errors.get(key, 0.0), float(max(values)))
    return errors


def compared(analyze, old, new, precision):
    """{(model, batch): (new ÷ old step, low, high)} from compare's throughput ratio (after ÷ before) of the two sides;
    the interval None where compare has none."""
    command = [analyze, "compare", ",".join(old), ",".join(new), "--format", "json", "--ignore-setting", "per-batch"]
    if OLD_OF[precision] != precision:
        command += ["--ignore-setting", "precision"]
    rows = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout)
    found = {}
    for row in rows["tables"]["comparison"]["rows"]:
        low, high = row.get("ratio_low"), row.get("ratio_high")
        found[(row["model"], int(row["global_batch"]))] = (
            1 / row["ratio"], 1 / high if high else None, 1 / low if low else None)
    return found


def mean(values):
    return sum(values) / len(values) if values else None


def ms(value):
    return f"{value:.4f}" if value is not None else "not run"


def main(argv):
    analyze, directory = report_json.table_arguments(argv, __doc__)
    analyze = analyze or os.environ.get("MGPU_ANALYZE") or report_json.DEFAULT_ANALYZE
    probe_path = os.path.join(directory, "probe.h5")
    rates = None
    if os.path.exists(probe_path):
        with h5py.File(probe_path, "r") as f:
            rates = step_floor.ProbeRates(f["probe"])
    every = sorted(glob.glob(os.path.join(directory, "*.h5")))
    every = [path for path in every if os.path.basename(path) != "probe.h5"]
    report = report_json.Report(every, analyze) if every else None
    print("| precision | model, batch | old ms | new ms | new ÷ old [95%] | floor ms (bound) | new ÷ floor | "
          "PyTorch ms | math check (new) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for precision in ORDER:
        old_paths, new_paths = files(directory, "old", OLD_OF[precision]), files(directory, "new", precision)
        if not new_paths:
            continue
        old, new = group_cells(report, old_paths), group_cells(report, new_paths)
        ratios = compared(analyze, old_paths, new_paths, precision) if old_paths else {}
        errors = math_check_errors(new_paths)
        peer_path = os.path.join(directory, f"peer_{precision}.h5")
        peer = group_cells(report, [peer_path]) if os.path.exists(peer_path) else {}
        for model, batch in sorted(new, key=lambda cell: (list(PRESETS).index(cell[0]), cell[1])):
            cell = (model, batch)
            new_ms, old_ms = mean(new[cell]), mean(old.get(cell, []))
            ratio = ratios.get(cell)
            ratio_text = "not paired" if ratio is None else (
                f"{ratio[0]:.3f} [{ratio[1]:.3f}, {ratio[2]:.3f}]" if ratio[1] is not None else
                f"{ratio[0]:.3f} (no interval)")
            floor_text, over = "not run", "not run"
            if rates is not None:
                floor_ms, bound, _ = step_floor.floor(rates, model, PRESETS[model], batch, 1, precision)
                floor_text, over = f"{floor_ms:.4f} ({bound})", f"{new_ms / floor_ms:.2f}×"
            error = errors.get(cell)
            print(f"| {precision}{' (old: fp32)' if OLD_OF[precision] != precision else ''} | {model} {batch} | "
                  f"{ms(old_ms)} | {ms(new_ms)} | {ratio_text} | {floor_text} | {over} | {ms(mean(peer.get(cell, [])))}"
                  f" | {'not checked' if error is None else f'{error:.3g}'} |")
    print()
    print("old, new: the mean step (ms, `--timing step`, one GPU) over the kept runs of each pass's process, averaged "
          "over the passes; new ÷ old: mgpu_analyze compare's ratio of the two builds' trial means (one trial a pass, "
          "the passes in both orders), as step time. Floor: bench/step_floor.py from the probe of the same job "
          "(tf32x3: three TF32 products). PyTorch: bench/peers/torch_mlp.py --mode graph at the same precision. Math "
          "check: the worst error of the new build's configuration over the passes (tf32x3 against the fp32 "
          "reference step, at fp32's tolerance).")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
