#!/usr/bin/env python3
"""Purpose: every measured figure of README.md and docs/, generated from the results archive (bench/results/): each
generated block sits between `<!-- generated: NAME -->` and `<!-- generated: end -->` and is rewritten whole, and the
README's plot is drawn by mgpu_analyze from the archived results files. --check rewrites nothing and exits 1 naming
every block or figure that differs from what the archive gives (CTest docs_figures_are_generated).

Every figure and every sentence that states a measured fact comes from `mgpu_analyze report --format json` of
archived results files, with the method that measured them: README's answer per GPU count from its best archived
source (bench/answer_docs.py: the default method's trials where archived, else the archived grid with its method) and
the study's grid through host memory (STUDY_PCIE, by the default method only). The words about a break-even and its
bands are the analyzer's own (its break_even table); a speedup without an interval prints its reason ("too few
runs"), never a bare figure. Where a file is not archived yet, its block says so and gives the command that measures
it. Console samples are re-made by today's binaries from archived results files (bench/console_docs.py: compare's
output, the first run by `mgpu_bench replay`), never pasted. Besides: the binaries' --help (docs/cli*.md), and the
step against PyTorch (the tables bench/large_batch_table.py wrote).

Usage: python3 bench/generate_docs.py [--check] [--analyze MGPU_ANALYZE] [--bench MGPU_BENCH] [ROOT]
(the binaries default to build/mgpu_analyze and build/mgpu_bench)
"""
import pathlib
import re
import subprocess
import sys
import tarfile
import tempfile

# The cluster page's generator sits beside this file, which check_docs.py loads by path (not from bench/).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import answer_docs  # noqa: E402
import cluster_docs  # noqa: E402
import console_docs  # noqa: E402
from answer_docs import prose  # noqa: E402
import step_floor  # noqa: E402  (the floor of a step, as bench/performance_table.py computes it)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "peers"))
import results_h5  # noqa: E402  (the presets' widths)

# The study's grid with the pcie-host-bridge preset (bench/run_study.sh's file of that preset).
STUDY_PCIE = "bench/results/study-h200x2/study-pcie-host-bridge.h5"
PEER_GRID = "bench/results/grid-h200x4"  # bench/large_batch_performance.sh on 1, 2 and 4 GPUs
PEER_TABLES = {1: f"{PEER_GRID}/large_batch_table_1.md", 2: f"{PEER_GRID}/large_batch_table_2.md",
               4: f"{PEER_GRID}/large_batch_table_4.md"}
# The probe of that machine's first start (results/probe.h5 of the 4-GPU call; the 2- and 1-GPU calls ran right after
# on the same GPUs): the floors of the peer table.
PEER_PROBE = f"{PEER_GRID}/large_batch_results_4.tar.gz"
ANALYZE = BENCH = None  # the binaries, from the command line
PLOT = "docs/figures/speedup_vs_batch.svg"


def study_pcie(root, context):
    """docs/study.md: the study's grid through host memory, with the analyzer's verdicts."""
    curve = context["pcie"].curves.get(2)
    if curve is None:
        return prose("The study's grid with the `pcie-host-bridge` preset by the default method is not yet archived as "
                     "a results file: `PRESETS=pcie-host-bridge bash bench/run_study.sh DIR` measures it (its file is "
                     "`DIR/study-pcie-host-bridge.h5`), and archived under `bench/results/`, "
                     "`bench/generate_docs.py` draws this block from it.")
    return curve.block("../")


def peer_probe_rates(root):
    """step_floor.ProbeRates of the peer table's archived probe."""
    import h5py  # the docs' other blocks need none; CTest runs this with an interpreter that has it
    with tarfile.open(root / PEER_PROBE) as archive, tempfile.TemporaryDirectory() as directory:
        archive.extract("results/probe.h5", directory)
        with h5py.File(pathlib.Path(directory) / "results" / "probe.h5", "r") as f:
            return step_floor.ProbeRates(f["probe"])


def minimum_effect():
    """The verdict's minimum effect (kMinimumEffect) as mgpu_analyze's --help states it: compare's default band."""
    run = subprocess.run([ANALYZE, "--help"], capture_output=True, text=True)
    found = re.search(r"--min-effect E \(=([0-9.]+)\)", run.stdout)
    if run.returncode != 0 or found is None:
        sys.exit(f"generate_docs: {ANALYZE} --help states no default --min-effect")
    return float(found[1])


def verdict_rule(root, context):
    """docs/verdict.md: where the interval lies and the sentence it gives, at the minimum effect mgpu_analyze states."""
    band = minimum_effect()
    low, high, percent = f"{1 - band:g}", f"{1 + band:g}", f"{100 * band:g}%"
    rows = [("wholly below " + low, "adding a GPU slows this step down"),
            ("wholly above " + high, 'adding a GPU speeds this step up ("adding GPUs" for N > 2)'),
            ("contains 1 (an end at exactly 1 counts)",
             "no significant difference from 1 GPU (the 95% interval contains 1)"),
            (f"excludes 1 but reaches into {low}–{high} (ends included)",
             f"no clear difference from 1 GPU (the 95% interval excludes 1, not the {percent} either side of it)"),
            ("none (fewer than 5 kept runs on a side)", "too few runs to tell")]
    table = "\n".join(["| interval | sentence |", "|---|---|"] + [f"| {i} | {s} |" for i, s in rows])
    return table + "\n\n" + prose(
        f"The {percent} (`kMinimumEffect`, `src/stats/statistics.hpp`; the rule is `speedup_verdict`, "
        "`src/stats/speedup_verdict.hpp`) is also `compare`'s minimum effect and makes the break-even's bands of no "
        "clear difference: a smaller change is not one to buy or sell GPUs on, and processes of one configuration "
        "differ by about that much. A trial verdict that is neither faster nor slower adds how many trials in all "
        "would tell, extrapolated from the job's own interval ([statistics.md](statistics.md)).")


def peer_table(root, context):
    """Our step against the strongest PyTorch step on 1, 2 and 4 GPUs, from the tables of the grid's calls, and ours ÷
    the floor of each cell (bench/step_floor.py at the local batch, from the archived probe; on N GPUs without the
    all-reduce's term, which no archived sweep of that machine gives: a lower floor, so a higher ratio)."""
    rates = peer_probe_rates(root)
    widths = {model: spec[0] for model, spec in results_h5.PRESETS.items()}
    cells = {}
    for gpus, path in PEER_TABLES.items():
        section = (root / path).read_text().split(f"| model, batch, {gpus} GPU(s) |")[1].split("\n\n")[0]
        for line in section.splitlines()[2:]:
            c = [x.strip() for x in line.strip("|").split("|")]
            ours, peer = re.match(r"[\d.]+", c[1])[0], re.match(r"[\d.]+|not run", c[3])[0]
            if peer != "not run":
                cells.setdefault(c[0], {})[gpus] = (float(ours), float(peer))
    lines = ["| model, global batch | 1 GPU | ours ÷ floor | 2 GPUs | ours ÷ floor | 4 GPUs | ours ÷ floor |",
             "|---|---|---|---|---|---|---|"]
    for name, by_gpus in cells.items():
        model, batch = name.split()
        row = []
        for gpus in (1, 2, 4):
            ours, peer = by_gpus.get(gpus, (None, None))
            if ours is None:
                row += ["—", "—"]
                continue
            floor_ms = step_floor.floor(rates, model, widths[model], int(batch) // gpus, gpus)[0]
            row += [f"{ours:.4f} / {peer:.4f} ({peer / ours:.1f}×)", f"{ours / floor_ms:.1f}×"]
        lines.append(f"| {name} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def help_text(*command):
    """A binary's --help, as it prints it."""
    run = subprocess.run(list(command) + ["--help"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"generate_docs: {' '.join(command)} --help failed: {run.stderr.strip()}")
    return "```\n" + run.stdout.rstrip("\n") + "\n```"


# Each page's generated blocks: name -> text of (root, context).
BLOCKS = {"README.md": {"grid-answer": lambda root, context: answer_docs.grid_answer(context["answer"], root),
                         "compare-example": lambda root, context: console_docs.compare_example(
                             root, ANALYZE, context["work"] / "console")},
          "docs/study.md": {"pcie-grid": study_pcie,
                            "nvlink-answer": lambda root, context: answer_docs.study_nvlink(context["answer"])},
          "docs/performance.md": {"peer-table": peer_table},
          "docs/cli.md": {"help-mgpu_bench": lambda root, context: help_text(BENCH),
                          "help-allreduce": lambda root, context: help_text(BENCH, "allreduce"),
                          "help-probe": lambda root, context: help_text(BENCH, "probe"),
                          "help-replay": lambda root, context: help_text(BENCH, "replay")},
          "docs/cli-analyze.md": {"help-mgpu_analyze": lambda root, context: help_text(ANALYZE),
                                  "help-trace": lambda root, context: help_text(ANALYZE, "trace")},
          "docs/verdict.md": {"verdict-example": lambda root, context: answer_docs.verdict_example(context["answer"]),
                              "verdict-rule": verdict_rule,
                              "first-run": lambda root, context: console_docs.first_run(
                                  root, ANALYZE, BENCH, context["work"] / "console"),
                              "one-rank-verdict": lambda root, context: console_docs.one_rank_verdict(
                                  root, ANALYZE, BENCH, context["work"] / "console")}}
BLOCKS["docs/cluster.md"] = cluster_docs.blocks(lambda: ANALYZE)  # bench/cluster_docs.py
# A block's text may be empty (a new block): its end marker then follows the opening line at once.
BLOCK = re.compile(r"(<!-- generated: (\S+) -->\n)((?:(?!<!-- generated: ).)*?\n)??(<!-- generated: end -->)", re.S)


def plot_problems(root, answer, check):
    """README's plot is mgpu_analyze's speedup plot of the answer's sources; without one there is none."""
    plot = root / PLOT
    drawn = answer.plot()
    if drawn is None:
        if not plot.exists():
            return []
        if not check:
            plot.unlink()
        return [f"{PLOT} exists, but no grid is archived to draw it from"]
    if plot.exists() and plot.read_text() == drawn:
        return []
    if not check:
        plot.parent.mkdir(exist_ok=True)
        plot.write_text(drawn)
    return [f"{PLOT} differs from what mgpu_analyze draws from "
            f"{', '.join(c.source.path for c in answer.curves.values())}"]


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
    root = pathlib.Path(args[0] if args else pathlib.Path(__file__).resolve().parents[1]).resolve()
    global ANALYZE, BENCH
    ANALYZE, BENCH = (str(pathlib.Path(binaries[o]).resolve()) for o in ("--analyze", "--bench"))
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        context = {"work": work,
                   "answer": answer_docs.Answer(root, ANALYZE, answer_docs.SOURCES, work / "answer"),
                   "pcie": answer_docs.Answer(root, ANALYZE, {2: [answer_docs.Source(STUDY_PCIE)]}, work / "pcie")}
        return write_pages(root, context, check)


def write_pages(root, context, check):
    """Every generated block and the plot rewritten (or, with check, compared): 1 where one differed under check."""
    stale = plot_problems(root, context["answer"], check)
    for page, blocks in BLOCKS.items():
        path = root / page
        text = path.read_text()
        found = set()

        def fill(m):
            found.add(m[2])
            return m[1] + blocks[m[2]](root, context) + "\n" + m[4] if m[2] in blocks else m[0]

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
