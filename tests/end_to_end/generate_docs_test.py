#!/usr/bin/python3
"""Purpose: bench/generate_docs.py end to end on a copy of the pages, its choice of source switching as the archive
grows: with no 2-GPU grid archived the README's answer says so and gives the command, the plot drawn from the rest; with
only a one-trial file in an archived tarball (where bench/large_batch_performance.sh's grid goes) the answer comes from
it with its method (the intervals cover the runs of one process); with a CPU-fallback grid in trials archived where the
default method's file goes, the answer switches to it (its intervals cover independent processes): every cell, verdict,
break-even and band from mgpu_analyze's JSON of it (a cell without an interval says why), docs/study.md shows the same
cells, docs/verdict.md the verdict's own lines, the plot is drawn, the pairs whose independent jobs disagree are too
close to call, and --check passes, then fails once a generated cell is edited; a one-trial file where the default
method's goes is refused; check_docs' measured-figure check passes on the generated pages and names a figure written by
hand.

Usage: generate_docs_test.py ROOT MGPU_ANALYZE MGPU_BENCH GRID_IN_TRIALS.h5 ONE_TRIAL.h5 WORK_DIR
"""
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile

# What the generator reads besides the grid (the pages, the archive's tables and the console samples' files).
COPIED = ["README.md", "docs", "bench/results/cpu-console",  # the console samples' results files
          "bench/results/grid-h200x4/large_batch_table_1.md", "bench/results/grid-h200x4/large_batch_table_2.md",
          "bench/results/grid-h200x4/large_batch_table_4.md",
          "bench/results/grid-h200x4/large_batch_results_4.tar.gz",  # the peer table's probe (its floors)
          # docs/cluster.md's blocks (bench/cluster_docs.py): the probe, sweeps and grid, the published tables.
          "bench/results/model-check-h200x4/validation_default.tar.xz", "bench/results/published-allreduce",
          # Independent jobs of single pairs: which are too close to call.
          "bench/results/h200x4-2026-11-26/plan_convergence.md"]
GRID = "bench/results/grid-h200x2/grid.h5"  # the default method's file on 2 GPUs
ARCHIVED_GRID = "bench/results/grid-h200x4/large_batch_results_2.tar.gz"  # the grid's tarball, results/ours.h5 in it
CELL = r"(?:\d\.\d{3} \[-?\d\.\d{3}, \d\.\d{3}\]|too few runs|too noisy)"  # a cell: its interval (on a loaded CPU a low end may fall below 0), or why none


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def block(text, name):
    found = re.search(rf"<!-- generated: {name} -->\n(.*?)<!-- generated: end -->", text, re.S)
    if found is None:
        fail(f"no block {name}")
    return found.group(1)


def main(argv):
    if len(argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    source, analyze, bench, grid, one_trial, work = (pathlib.Path(a).resolve() for a in argv[1:])
    root = work / "root"
    shutil.rmtree(work, ignore_errors=True)
    for path in COPIED:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (source / path).is_dir() else shutil.copy)(source / path, root / path)
    generator = [sys.executable, str(source / "bench/generate_docs.py"), "--analyze", str(analyze), "--bench",
                 str(bench), str(root)]

    def generate(*extra):
        return subprocess.run(generator[:2] + list(extra) + generator[2:], capture_output=True, text=True)

    # No 2-GPU grid archived (the 4-GPU tarball is, for the peer table's probe): the answer says so and gives the
    # command; the plot is redrawn from what is archived.
    (root / "docs/figures").mkdir(parents=True, exist_ok=True)
    (root / "docs/figures/speedup_vs_batch.svg").write_text("<svg>an old plot</svg>")
    if generate().returncode != 0 or generate("--check").returncode != 0:
        fail("the generator on the pages without a grid")
    answer = block((root / "README.md").read_text(), "grid-answer")
    flat = " ".join(answer.split())  # a command may wrap at any space
    if "is not yet archived" not in flat or "--batch 8,32,128,512,1024,2048,4096" not in flat:
        fail(f"README's answer without a grid:\n{answer}")
    if "an old plot" in (root / "docs/figures/speedup_vs_batch.svg").read_text():
        fail("the plot is not redrawn from the archived grid")

    # Only the grid's tarball archived: the answer comes from it, with its method.
    (root / ARCHIVED_GRID).parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(root / ARCHIVED_GRID, "w:gz") as archive:
        archive.add(one_trial, "results/ours.h5")
    if generate().returncode != 0:
        fail("the generator on the archived tarball")
    words = " ".join(block((root / "README.md").read_text(), "grid-answer").split())
    for expected in ("Measured on 2 ranks of the CPU fallback against 1, ",
                     "`--timing interleaved`, 3 runs per configuration (",  # how many were kept varies
                     "kept by the outlier screen), 1 trial per cell: the intervals are over the runs of one process, "
                     "not over independent processes",
                     "([grid-h200x4/large_batch_results_2.tar.gz](bench/results/grid-h200x4/large_batch_results_2.tar"
                     ".gz): `results/ours.h5`)", "| 16 | too few runs | too few runs to tell |",
                     "medium, global batch 128, 2 GPUs: too close to call (18 jobs, speedups 0.941 to 1.067; slower "
                     "in 4, no clear difference in 11, faster in 3)"):
        if expected not in words:
            fail(f"README's answer from the tarball lacks '{expected}':\n{words}")

    # A grid in trials archived where the default method's file goes: stale until generated, then every figure from
    # it, the tarball no longer cited.
    (root / GRID).parent.mkdir(parents=True)
    shutil.copy(grid, root / GRID)
    stale = generate("--check")
    if stale.returncode != 1 or "README.md: a generated block differs" not in stale.stdout:
        fail(f"--check with a new grid archived: {stale.returncode}\n{stale.stdout}")
    run = generate()
    if run.returncode != 0:
        fail(f"the generator on the grid: {run.stdout}{run.stderr}")
    readme = (root / "README.md").read_text()
    answer = block(readme, "grid-answer")
    table = re.findall(rf"^\| (?:8|64) \| {CELL} \| [a-z ]+ \|$", answer, re.M)
    if len(table) != 2 or "| 2 GPUs, global batch | medium: speedup [95%] | medium: verdict |" not in answer:
        fail(f"README's table:\n{answer}")
    words = " ".join(answer.split())  # the prose is wrapped at 120 characters
    for expected in ("Measured on 2 ranks of the CPU fallback against 1, ", "`--timing interleaved`, 3 trials per cell",
                     "the intervals are over the trial means: they cover independent processes",
                     "[grid-h200x2/grid.h5](bench/results/grid-h200x2/grid.h5)", "- medium on 2 GPUs: ",
                     "the largest batch measured; no clear difference: ", "too close to call",
                     "docs/figures/speedup_vs_batch.svg"):
        if expected not in words:
            fail(f"README's answer lacks '{expected}':\n{answer}")
    if "large_batch_results_2.tar.gz" in words:
        fail(f"README's answer still cites the tarball:\n{answer}")
    if "<svg" not in (root / "docs/figures/speedup_vs_batch.svg").read_text():
        fail("no plot drawn")
    study = block((root / "docs/study.md").read_text(), "nvlink-answer")
    if any(row not in study for row in table):
        fail(f"docs/study.md's cells differ from README's:\n{study}")
    verdict = block((root / "docs/verdict.md").read_text(), "verdict-example")
    if "# verdict (" not in verdict or "#   medium, global batch 8, 2 GPUs, 3 trials: speedup" not in verdict or \
            "#   break-even, medium on 2 GPUs: " not in verdict:
        fail(f"docs/verdict.md's example:\n{verdict}")
    if generate("--check").returncode != 0:
        fail("--check right after generating")

    # check_docs' measured-figure check: the generated pages pass, a figure written by hand fails.
    spec = importlib.util.spec_from_file_location("check_docs", source / "tests/end_to_end/check_docs.py")
    check_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_docs)
    if check_docs.check_measured_figures(root):
        fail(f"measured-figure check on the generated pages: {check_docs.check_measured_figures(root)}")
    (root / "README.md").write_text(readme.replace("## Two commands", "Medium pays from ~1,654 (speedup 0.97 [0.95, "
                                                   "0.99]).\n\n## Two commands"))
    problems = check_docs.check_measured_figures(root)
    if not any("'[0.95, 0.99]'" in p for p in problems) or not any("'~1,654'" in p for p in problems):
        fail(f"a figure written by hand outside a generated block was not named: {problems}")

    # An edited cell is stale.
    (root / "README.md").write_text(readme.replace(table[0], table[0].replace("| 8 |", "| 9 |")))
    if generate("--check").returncode != 1:
        fail("--check passed with an edited cell")

    # A file measured in one trial where the default method's goes is refused.
    shutil.copy(one_trial, root / GRID)
    refused = generate()
    if refused.returncode == 0 or "is not measured by the default method" not in refused.stderr:
        fail(f"a one-trial grid was not refused: {refused.returncode} {refused.stderr}")
    print("generate_docs: no grid, the grid's tarball, a CPU grid in trials, an edited cell, a one-trial file where the "
          "default method's goes: as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
