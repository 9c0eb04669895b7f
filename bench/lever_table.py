#!/usr/bin/env python3
"""Purpose: the table of bench/overlap_levers.sh: per lever, the N-GPU speedup over 1 GPU, its ceiling (the speedup
if communication cost nothing) and the fraction of the ceiling reached, each with its 95% interval over the passes,
and the N-GPU step's mean phases (step, backward, exposed all-reduce, optimizer, over the passes' marked runs). All
figures are mgpu_analyze report's (docs/statistics.md), read from its JSON.

Usage: python3 bench/lever_table.py --analyze build/mgpu_analyze --gpus 4 OUT_DIR
"""
import argparse
import glob
import os
import re
import sys

from ceiling_table import ratio, report, rows


def lever_row(analyze, base_files, lever_files, gpus):
    result = report(analyze, base_files + lever_files)
    scaling = [r for r in rows(result["tables"]["scaling"]) if r["gpus"] == gpus]
    phases = [r for r in rows(result["tables"]["phases"]) if r["gpus"] == gpus]
    mean = lambda name: (sum(r[name] for r in phases if r[name] is not None) /
                         max(1, sum(1 for r in phases if r[name] is not None)))
    return (scaling[0] if scaling else None), {n: mean(n) for n in
                                               ("step_ms", "backward_ms", "exposed_comm_ms", "optimizer_ms")}


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--analyze", required=True)
    parser.add_argument("--gpus", type=int, required=True)
    parser.add_argument("out")
    args = parser.parse_args(argv[1:])
    base = sorted(glob.glob(os.path.join(args.out, "base_p*.h5")))
    names = sorted({re.sub(r"^lever_(.*)_p[0-9]+\.h5$", r"\1", os.path.basename(f))
                    for f in glob.glob(os.path.join(args.out, "lever_*_p*.h5"))})
    print(f"| lever ({args.gpus} GPUs) | speedup | ceiling | of ceiling | step ms | backward ms | exposed all-reduce ms "
          "| optimizer ms |")
    print("|---|---|---|---|---|---|---|---|")
    for name in sorted(names, key=lambda n: (n != "default", n)):
        files = sorted(glob.glob(os.path.join(args.out, f"lever_{name}_p*.h5")))
        scaling, phases = lever_row(args.analyze, base, files, args.gpus)
        print(f"| {name} | {ratio(scaling, 'speedup')} | {ratio(scaling, 'ceiling')} | "
              f"{ratio(scaling, 'ceiling_fraction')} | {phases['step_ms']:.4f} | {phases['backward_ms']:.4f} | "
              f"{phases['exposed_comm_ms']:.4f} | {phases['optimizer_ms']:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
