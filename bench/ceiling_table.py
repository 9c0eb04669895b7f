#!/usr/bin/env python3
"""Purpose: the table of bench/ceiling_grid.sh: per model, global batch of the grid and GPU count, our speedup over
1 GPU, its ceiling (the speedup if communication cost nothing) and the fraction of the ceiling reached, each with its
95% interval over the passes (mgpu_analyze's trials: pass k of N GPUs with pass k of 1 GPU), our exposed all-reduce
(mean over the passes' marked runs), and the same three figures for the PyTorch peer where its files are there. All
figures are mgpu_analyze report's (docs/statistics.md), read from its JSON.

Usage: python3 bench/ceiling_table.py --analyze build/mgpu_analyze --grid "large:1024,2048,4096" OUT_DIR
"""
import argparse
import glob
import json
import os
import subprocess
import sys


def report(analyze, files):
    """mgpu_analyze report's JSON of these files, or None where there are none."""
    if not files:
        return None
    run = subprocess.run([analyze, "report", *files, "--format", "json"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"ceiling_table: {analyze} report failed: {run.stderr.strip()}")
    return json.loads(run.stdout)


def rows(table):
    return [dict(zip(table["columns"], [row[c] for c in table["columns"]])) for row in table["rows"]]


def cells(result):
    """(model, batch, gpus) -> the scaling row; and -> mean exposed_comm_ms over the files' configurations."""
    if result is None:
        return {}, {}
    scaling = {(r["model"], r["global_batch"], r["gpus"]): r for r in rows(result["tables"]["scaling"])}
    exposed = {}
    for r in rows(result["tables"]["phases"]):
        if r["exposed_comm_ms"] is not None:
            exposed.setdefault((r["model"], r["global_batch"], r["gpus"]), []).append(r["exposed_comm_ms"])
    return scaling, {k: sum(v) / len(v) for k, v in exposed.items()}


def ratio(row, name):
    if row is None or row.get(name) is None:
        return "—"
    low, high = row.get(name + "_low"), row.get(name + "_high")
    bounds = f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    return f"{row[name]:.3f}{bounds}"


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--analyze", required=True)
    parser.add_argument("--grid", required=True, help='"large:1024,2048 medium:4096": the cells of the table')
    parser.add_argument("out")
    args = parser.parse_args(argv[1:])
    ours, ours_exposed = cells(report(args.analyze, sorted(glob.glob(os.path.join(args.out, "ours_*_p*.h5")))))
    peer, _ = cells(report(args.analyze, sorted(glob.glob(os.path.join(args.out, "peer_*_p*.h5")))))
    print("| model | global batch | GPUs | speedup | ceiling | of ceiling | exposed all-reduce ms | peer speedup | "
          "peer ceiling | peer of ceiling |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for entry in args.grid.split():
        model, batches = entry.split(":")
        for batch in (int(b) for b in batches.split(",")):
            for gpus in sorted({k[2] for k in ours if k[0] == model and k[1] == batch}):
                key = (model, batch, gpus)
                exposed = f"{ours_exposed[key]:.4f}" if key in ours_exposed else "—"
                mine, theirs = ours.get(key), peer.get(key)
                print(f"| {model} | {batch} | {gpus} | {ratio(mine, 'speedup')} | {ratio(mine, 'ceiling')} | "
                      f"{ratio(mine, 'ceiling_fraction')} | {exposed} | {ratio(theirs, 'speedup')} | "
                      f"{ratio(theirs, 'ceiling')} | {ratio(theirs, 'ceiling_fraction')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
