#!/usr/bin/env python3
"""Purpose: every measured figure of README.md and docs/, generated from the results archive (bench/results/): each
generated block sits between `<!-- generated: NAME -->` and `<!-- generated: end -->` and is rewritten whole, and the
README's plot is drawn by mgpu_analyze from the archived results files. --check rewrites nothing and exits 1 naming
every block or figure that differs from what the archive gives (CTest docs_figures_are_generated).

Sources: the verdicts mgpu_bench printed for the answer's runs (answer-h200x2/*_verdict.txt, the lines of
compute_answer); the binaries' --help (docs/cli.md); the default step's grid on 1, 2 and 4 GPUs (grid-h200x4/: its results files, read by
`mgpu_analyze report --format json`, and the tables bench/large_batch_table.py wrote).

Usage: python3 bench/generate_docs.py [--check] [--analyze MGPU_ANALYZE] [--bench MGPU_BENCH] [ROOT]
(the binaries default to build/mgpu_analyze and build/mgpu_bench)
"""
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import cluster_docs

ARCHIVE = "bench/results/answer-h200x2"
NVLINK = f"{ARCHIVE}/user_command_verdict.txt"  # mpirun -np 2 mgpu_bench --model large,medium --batch 32,128
PCIE = f"{ARCHIVE}/study_pcie_trials3_verdict.txt"  # the study grid, pcie-host-bridge preset, 3 trials
GRID = "bench/results/grid-h200x4"  # GPUS=2 and GPUS=4 bench/large_batch_performance.sh, default step, --timing step
GRID_FILES = {2: f"{GRID}/large_batch_results_2.tar.gz", 4: f"{GRID}/large_batch_results_4.tar.gz"}
PEER_TABLES = {1: f"{GRID}/large_batch_table_1.md", 2: f"{GRID}/large_batch_table_2.md", 4: f"{GRID}/large_batch_table_4.md"}
ANALYZE = BENCH = None  # the binaries, from the command line
PLOT = "docs/figures/speedup_vs_batch.svg"
FIRST_RUN = "bench/results/cpu-first-run.txt"  # bash launch/build-and-run.sh on 2 cores without GPUs
PARAMETERS = {"medium": "258,432", "large": "6,885,376"}  # the presets' parameter counts (docs/measurement.md)

PAIR = re.compile(r"^#\s+(\w+), global batch (\d+), (\d+) GPUs(?:, \d+ trials)?: speedup ([\d.]+) \[([\d.]+), ([\d.]+)\]")
BREAK_EVEN = re.compile(r"^#\s+break-even, (\w+) on (\d+) GPUs[^:]*: (.*)$")


def read_verdict(root, path):
    """{model: {batch: (speedup, low, high)}} and {model: break-even sentence} of one verdict file."""
    pairs, break_evens = {}, {}
    for line in (root / path).read_text().splitlines():
        if (m := PAIR.match(line)):
            pairs.setdefault(m[1], {})[int(m[2])] = tuple(float(m[g]) for g in (4, 5, 6))
        elif (m := BREAK_EVEN.match(line)):
            break_evens[m[1]] = m[3]
    return pairs, break_evens


def interval(speedup):
    return f"{speedup[0]:.3f} [{speedup[1]:.3f}, {speedup[2]:.3f}]"


def nvlink_table(root):
    pairs, _ = read_verdict(root, NVLINK)
    batches = sorted({b for model in pairs.values() for b in model})
    rows = ["| model | " + " | ".join(f"global batch {b}" for b in batches) + " |",
            "|---" * (len(batches) + 1) + "|"]
    for model in ("medium", "large"):
        cells = [interval(pairs[model][b]) for b in batches]
        rows.append(f"| {model} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def pcie_range(root):
    pairs, _ = read_verdict(root, PCIE)
    spans = []
    for model in ("medium", "large"):
        values = [s[0] for s in pairs[model].values()]
        spans.append(f"{model} {min(values):.3f} to {max(values):.3f}")
    return ("With the study's PCIe host-bridge preset (gradients through host memory), two GPUs are slower at every "
            "point of\nthe study's grid, " + " and ".join(spans) + "\n([docs/study.md](docs/study.md)): the study's "
            "conclusion holds for its interconnect, and the parameter count is not what\ndecides.")


def pcie_tables(root):
    pairs, _ = read_verdict(root, PCIE)
    tables = []
    for model in ("medium", "large"):
        batches = sorted(pairs[model])
        tables.append("\n".join([f"| {model} | " + " | ".join(str(b) for b in batches) + " |",
                                 "|---" * (len(batches) + 1) + "|",
                                 "| speedup, 2 GPUs | " + " | ".join(interval(pairs[model][b]) for b in batches) +
                                 " |"]))
    return "\n\n".join(tables)


def grid_report(root, analyze, out_dir):
    """mgpu_analyze's report of the grid's files (json), with its plots written to out_dir."""
    with tempfile.TemporaryDirectory() as scratch:
        files = []
        for gpus, archive in GRID_FILES.items():
            with tarfile.open(root / archive) as tar:
                (pathlib.Path(scratch) / f"ours_{gpus}gpus.h5").write_bytes(
                    tar.extractfile("results/ours.h5").read())
            files.append(f"ours_{gpus}gpus.h5")
        run = subprocess.run([analyze, "report", *files, "--format", "json", "--out", str(out_dir)], cwd=scratch,
                             capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"generate_docs: {analyze} report failed: {run.stderr.strip()}")
    return json.loads(run.stdout)


def rows_of(table):
    return [dict(zip(table["columns"], [row[c] for c in table["columns"]])) for row in table["rows"]]


def grid_table(report):
    """Per model and GPU count: the speedup at each global batch and where N GPUs start to pay."""
    scaling = rows_of(report["tables"]["scaling"])
    batches = [32, 128, 1024, 4096]
    lines = ["| model | GPUs | " + " | ".join(f"batch {b}" for b in batches) + " | N GPUs pay from global batch |",
             "|---" * (len(batches) + 3) + "|"]
    for row in rows_of(report["tables"]["break_even"]):
        model, gpus = row["model"], row["gpus"]
        speedups = {r["global_batch"]: r["speedup"] for r in scaling if r["model"] == model and r["gpus"] == gpus}
        pays = f"~{row['break_even_batch']:,.0f}" if row["kind"] == "crossing" else row["statement"]
        lines.append(f"| {model} ({PARAMETERS[model]}) | {gpus} | " +
                     " | ".join(f"{speedups[b]:.2f}" if b in speedups else "—" for b in batches) + f" | {pays} |")
    return "\n".join(lines)


def peer_table(root):
    """Our step against the strongest PyTorch step on 1, 2 and 4 GPUs, from the tables of the grid's calls."""
    cells = {}
    for gpus, path in PEER_TABLES.items():
        section = (root / path).read_text().split(f"| model, batch, {gpus} GPU(s) |")[1].split("\n\n")[0]
        for line in section.splitlines()[2:]:
            c = [x.strip() for x in line.strip("|").split("|")]
            ours, peer = re.match(r"[\d.]+", c[1])[0], re.match(r"[\d.]+|not run", c[3])[0]
            if peer != "not run":
                cells.setdefault(c[0], {})[gpus] = (float(ours), float(peer))
    lines = ["| model, global batch | 1 GPU | 2 GPUs | 4 GPUs |", "|---|---|---|---|"]
    for name, by_gpus in cells.items():
        row = [f"{o:.4f} / {p:.4f} ({p / o:.1f}×)" if (o, p) != (None, None) else "—"
               for o, p in (by_gpus.get(g, (None, None)) for g in (1, 2, 4))]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def verdict_example(root):
    """The default command's verdict as mgpu_bench printed it."""
    return "```\n" + (root / NVLINK).read_text().rstrip("\n") + "\n```"


def first_run(root):
    """The CPU fallback's first run as build-and-run printed it: its revision, time stamp and progress lines left
    out, of each configuration's runs the first two and the phase-marked one."""
    text = (root / FIRST_RUN).read_text().rstrip("\n")
    text = re.sub(r"\(git [0-9a-f]{7,}(-dirty)?\)", "(git <revision>)", text)
    text = re.sub(r"mgpu_bench_\d{8}T\d{6}Z\.h5", "mgpu_bench_<UTC time>.h5", text)
    # Of each configuration's run lines the first two and the phase-marked one; no progress lines.
    kept, runs = [], 0
    for line in text.splitlines():
        if line.startswith("#  run "):
            runs = 0
        elif re.match(r"\s+\d+\s", line):
            runs += 1
            if runs > 2 and "phases marked" not in line:
                continue
        elif line.startswith("# progress:") or line == "...":
            continue
        kept.append(line)
    text = "\n".join(kept)
    return "```\n" + text + "\n```"

def help_text(*command):
    """A binary's --help, as it prints it."""
    run = subprocess.run(list(command) + ["--help"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"generate_docs: {' '.join(command)} --help failed: {run.stderr.strip()}")
    return "```\n" + run.stdout.rstrip("\n") + "\n```"

# Each page's generated blocks: name -> text.
BLOCKS = {"README.md": {"grid-answer": lambda root, report: grid_table(report),
                        "nvlink-answer": lambda root, report: nvlink_table(root),
                        "pcie-range": lambda root, report: pcie_range(root)},
          "docs/study.md": {"pcie-grid": lambda root, report: pcie_tables(root),
                            "nvlink-answer": lambda root, report: nvlink_table(root)},
          "docs/performance.md": {"peer-table": lambda root, report: peer_table(root)},
          "docs/cli.md": {"help-mgpu_bench": lambda root, report: help_text(BENCH),
                          "help-allreduce": lambda root, report: help_text(BENCH, "allreduce"),
                          "help-probe": lambda root, report: help_text(BENCH, "probe")},
          "docs/cli-analyze.md": {"help-mgpu_analyze": lambda root, report: help_text(ANALYZE),
                                  "help-trace": lambda root, report: help_text(ANALYZE, "trace")},
          "docs/verdict.md": {"verdict-example": lambda root, report: verdict_example(root),
                              "first-run": lambda root, report: first_run(root)}}
BLOCKS["docs/cluster.md"] = cluster_docs.blocks(lambda: ANALYZE)  # bench/cluster_docs.py
BLOCK = re.compile(r"(<!-- generated: (\S+) -->\n)(.*?)(\n<!-- generated: end -->)", re.S)


def main(argv):
    args = argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    binaries = {"--analyze": "build/mgpu_analyze", "--bench": "build/mgpu_bench"}
    for option in binaries:
        if option in args:
            at = args.index(option)
            binaries[option] = args[at + 1]
            del args[at:at + 2]
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parents[1])
    global ANALYZE, BENCH
    ANALYZE, BENCH = (str(pathlib.Path(binaries[o]).resolve()) for o in ("--analyze", "--bench"))
    analyze = ANALYZE
    stale = []
    with tempfile.TemporaryDirectory() as plots:
        report = grid_report(root, analyze, pathlib.Path(plots))
        drawn = (pathlib.Path(plots) / "speedup_vs_batch.svg").read_text()
    plot = root / PLOT
    if not plot.exists() or plot.read_text() != drawn:
        stale.append(f"{PLOT} differs from what mgpu_analyze draws from {GRID}")
        if not check:
            plot.parent.mkdir(exist_ok=True)
            plot.write_text(drawn)
    for page, blocks in BLOCKS.items():
        path = root / page
        text = path.read_text()
        found = set()

        def fill(m):
            found.add(m[2])
            return m[1] + blocks[m[2]](root, report) + m[4]

        new = BLOCK.sub(fill, text)
        stale += [f"{page}: no block '{name}'" for name in blocks if name not in found]
        if new != text:
            stale.append(f"{page}: a generated block differs from the archive (run python3 bench/generate_docs.py)")
            if not check:
                path.write_text(new)
    for problem in stale:
        print(problem)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
