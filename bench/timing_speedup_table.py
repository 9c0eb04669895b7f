#!/usr/bin/env python3
"""Purpose: bench/timing_speedups.sh's table: per cell (model, global batch, GPU count) each --timing mode's speedup
over the passes with its 95% interval, as mgpu_analyze gives it for the mode's files together (each pass a process of
its own, so a trial: the speedup over the trial means, Fieller's interval paired by pass), and its ratio to the default
mode's speedup with the bounds the two intervals allow (the mode's low end over the default's high end, its high end
over the default's low end). A mode moves a speedup when those bounds lie wholly outside 1 +- the verdict's minimum
effect (the analyzer's settings.min_effect): the answer's rule on bounds that hold wherever both intervals do. Exits 1
when a mode moves one. No statistic is computed here (bench/report_json.py).

Usage: python3 bench/timing_speedup_table.py [--analyze MGPU_ANALYZE] --modes "interleaved step events none" --passes 3
           DIR
"""
import argparse
import pathlib
import sys

import report_json  # bench/: the analyzer's statistics


def mode_speedups(directory, mode, passes, analyze):
    """{(model, global batch, gpus): report_json.Speedup} of one mode over every pass that has its file."""
    files = [directory / f"timing_{mode}_p{p}.h5" for p in range(1, passes + 1)]
    files = [str(f) for f in files if f.exists()]
    if not files:
        return {}
    report = report_json.Report(files, analyze)
    return {(s.row["model"], s.row["global_batch"], s.row["gpus"]): s for s in report.pairs.values()}


def ratio_to(speedup, default):
    """(ratio, low, high): the speedup over the default's, with the bounds of their intervals (None without both)."""
    ratio = speedup.ratio / default.ratio
    if speedup.low is None or default.low is None or default.low <= 0:
        return ratio, None, None
    return ratio, speedup.low / default.high, speedup.high / default.low


def ratio_text(ratio, low, high):
    return f"{ratio:.4f} [{low:.4f}, {high:.4f}]" if low is not None else f"{ratio:.4f} (no bounds)"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--analyze", help="mgpu_analyze (default: $MGPU_ANALYZE, else build/mgpu_analyze)")
    parser.add_argument("--modes", required=True)
    parser.add_argument("--passes", type=int, required=True)
    parser.add_argument("dir", type=pathlib.Path)
    args = parser.parse_args(argv)
    modes = args.modes.split()
    default = modes[0]
    measured = {m: mode_speedups(args.dir, m, args.passes, args.analyze) for m in modes}
    cells = sorted(measured[default])
    print(f"| model | global batch | GPUs | mode | speedup over the passes [95%] | ratio to {default} [bounds] | "
          "moved |")
    print("|---|---|---|---|---|---|---|")
    moved, band = [], None
    for cell in cells:
        for m in modes:
            speedup = measured[m].get(cell)
            if speedup is None:
                print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {m} | not measured | | |")
                continue
            if m == default:
                print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {m} | {speedup.text(3)} | | |")
                continue
            band = speedup.min_effect
            ratio, low, high = ratio_to(speedup, measured[default][cell])
            beyond = low is not None and (low > 1 + band or high < 1 - band)
            if beyond:
                moved.append(f"{cell[0]} {cell[1]} on {cell[2]}: {m}")
            print(f"| {cell[0]} | {cell[1]} | {cell[2]} | {m} | {speedup.text(3)} | {ratio_text(ratio, low, high)} | "
                  f"{'yes' if beyond else 'no'} |")
    print()
    beyond_text = f"beyond {100 * band:g}%" if band is not None else "beyond the minimum effect"
    print(f"moved {beyond_text}: " + ("; ".join(moved) if moved else "none"))
    return 1 if moved else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
