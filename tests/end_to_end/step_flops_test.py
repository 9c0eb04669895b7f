#!/usr/bin/python3
"""Purpose: the bench scripts' FLOP count (bench/step_floor.py step_flops, behind every TFLOP/s figure and the
floor's FLOP term they print) against the GEMM shapes the step runs, as an archived probe recorded them (the probe
times the step's GEMMs per model and batch: src/model/step_flops.hpp's list), and against the figure the C++ test
pins (tests/model/test_step_flops.cpp).

Usage: step_flops_test.py ROOT
"""
import pathlib
import re
import sys

import h5py

PROBE = "bench/results/h200x2-2026-11-21/tools.h5"  # /probe of performance.sh: the step's GEMMs of both presets


def main(argv):
    root = pathlib.Path(argv[1])
    sys.path.insert(0, str(root / "bench"))
    sys.path.insert(0, str(root / "bench" / "peers"))
    import performance_table as pt
    import step_floor
    problems = []
    if step_floor.step_flops(pt.PRESETS["large"], 32) != 31461888 * 32:
        problems.append(f"large at batch 32: {step_floor.step_flops(pt.PRESETS['large'], 32)} FLOPs, not 31,461,888 x 32")
    groups = {}
    with h5py.File(root / PROBE, "r") as f:
        labels = [str(x) for x in f["probe"].attrs["gemm_labels"]]
        shapes = f["probe"]["gemm_shape"][()]
    for label, (m, n, k) in zip(labels, shapes):
        found = re.match(r"(\w+) b(\d+) L(\d+) (\w+)$", label)
        if found:
            groups.setdefault((found.group(1), int(found.group(2))), []).append((label, 2 * int(m) * int(n) * int(k)))
    if not groups:
        problems.append(f"{PROBE}: no step GEMMs recorded")
    for (model, batch), gemms in sorted(groups.items()):
        recorded = sum(flops for _, flops in gemms)
        if recorded != step_floor.step_flops(pt.PRESETS[model], batch):
            problems.append(f"{model} at batch {batch}: the probe's {len(gemms)} GEMMs do {recorded} FLOPs, "
                            f"step_flops says {step_floor.step_flops(pt.PRESETS[model], batch)}")
        if any(label.endswith(" L0 input_grad") for label, _ in gemms):
            problems.append(f"{model} at batch {batch}: the probe recorded an input gradient of layer 0")
    print("\n".join(problems + [f"step_flops: {len(groups)} model and batch pairs of the probe checked, "
                                 f"{len(problems)} problem(s)"]))
    return int(bool(problems))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
