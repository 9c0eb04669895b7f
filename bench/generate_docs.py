#!/usr/bin/env python3
"""Purpose: every measured figure of README.md and docs/, generated from the results archive (bench/results/): each
generated block sits between `<!-- generated: NAME -->` and `<!-- generated: end -->` and is rewritten whole, and the
README's plot is drawn by mgpu_analyze from the archived results files. --check rewrites nothing and exits 1 naming
every block or figure that differs from what the archive gives (CTest docs_figures_are_generated).

Every figure and every sentence that states a measured fact comes from `mgpu_analyze report --format json` of an
archived results file measured by the default method (the default timing, in trials; a file measured otherwise is
refused): the headline grid per GPU count (GRIDS) and the study's grid through host memory (STUDY_PCIE). The words
about a break-even and its bands are the analyzer's own (its break_even table); a speedup without an interval prints
its reason ("too few runs"), never a bare figure. Where a file is not archived yet, its block says so and gives the
command that measures it. Besides: the binaries' --help (docs/cli*.md), the CPU fallback's first run as printed
(cpu-first-run.txt), and the step against PyTorch (the tables bench/large_batch_table.py wrote).

Usage: python3 bench/generate_docs.py [--check] [--analyze MGPU_ANALYZE] [--bench MGPU_BENCH] [ROOT]
(the binaries default to build/mgpu_analyze and build/mgpu_bench)
"""
import json
import pathlib
import re
import subprocess
import sys
import tarfile
import tempfile
import textwrap

# The cluster page's generator sits beside this file, which check_docs.py loads by path (not from bench/).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cluster_docs  # noqa: E402
import step_floor  # noqa: E402  (the floor of a step, as bench/performance_table.py computes it)

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "peers"))
import results_h5  # noqa: E402  (the presets' widths)

# The headline grid (medium and large at global batch 8 to 4096 on 1 and N GPUs, the default command's method), one
# archived file per machine, by its GPU count.
GRIDS = {2: "bench/results/grid-h200x2/grid.h5", 4: "bench/results/grid-h200x4/grid.h5"}
GRID_BATCHES = "8,32,128,512,1024,2048,4096"
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
FIRST_RUN = "bench/results/cpu-first-run.txt"  # bash launch/build-and-run.sh on 2 cores without GPUs
COMPARE = "bench/results/cpu-compare.txt"  # mgpu_analyze compare of two runs of one command on the CPU fallback
MODEL_ORDER = ("medium", "large")  # the study's models first, others after


def prose(text, indent=""):
    """A paragraph or list item wrapped as the pages are, at 120 characters."""
    return textwrap.fill(text, 120, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def report(root, files, out_dir=None):
    """mgpu_analyze's report of archived results files, as JSON (its plots into out_dir when given)."""
    command = [ANALYZE, "report", *[str(root / f) for f in files], "--format", "json"]
    if out_dir is not None:
        command += ["--out", str(out_dir)]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"generate_docs: {ANALYZE} report {' '.join(files)} failed: {run.stderr.strip()}")
    return json.loads(run.stdout)


def rows(report_json, table):
    found = report_json["tables"].get(table)
    return [] if found is None else found["rows"]


class Measured:
    """One archived file's answer: its pairs, curves and phases by GPU count, checked to be by the default method."""

    def __init__(self, root, path):
        self.root, self.path = root, path
        self.json = report(root, [path])
        configurations = rows(self.json, "configurations")
        other = sorted({c["timing"] for c in configurations if c["timing"] != "interleaved"})
        scaling = rows(self.json, "scaling")
        once = [r for r in scaling if r.get("trials", 1) < 2]
        if other or once or not scaling:
            sys.exit(f"generate_docs: {path} is not measured by the default method (timing {other or 'interleaved'}, "
                     f"{len(once)} of {len(scaling)} pairs in one trial): published figures need the default timing "
                     "and trials")
        self.parameters = {c["model"]: int(c["parameter_count"]) for c in configurations}
        names = {c["gpu_names"].split(",")[0].replace("NVIDIA ", "") for c in configurations if int(c["gpus"]) > 1}
        self.device = "cpu" if all(c["device"] == "cpu" for c in configurations) else ", ".join(sorted(names))
        self.gpu_counts = sorted({r["gpus"] for r in scaling})
        self.scaling, self.curves, self.phases = scaling, rows(self.json, "break_even"), rows(self.json, "phases")

    def models(self, gpus):
        found = {r["model"] for r in self.scaling if r["gpus"] == gpus}
        return [m for m in MODEL_ORDER if m in found] + sorted(found - set(MODEL_ORDER))

    def curve(self, model, gpus):
        """The analyzer's break-even row of a model's curve on N GPUs (the headline grid has one curve each)."""
        found = [c for c in self.curves if c["model"] == model and c["gpus"] == gpus]
        if len(found) > 1:
            sys.exit(f"generate_docs: {self.path} holds {len(found)} curves of {model} on {gpus} GPUs: "
                     f"{', '.join(c['curve'] for c in found)}")
        return found[0] if found else None

    def machine(self, gpus):
        return f"the CPU fallback with {gpus} ranks" if self.device == "cpu" else f"{gpus} × {self.device}"

    def source_link(self, prefix=""):
        """The archive folder, linked to its summary where it has one."""
        folder = str(pathlib.PurePosixPath(self.path).parent) + "/"
        summary = self.root / folder / "summary.md"
        return f"[{folder}]({prefix}{folder}summary.md)" if summary.exists() else f"`{folder}`"


def archived(root):
    return {gpus: Measured(root, path) for gpus, path in GRIDS.items() if (root / path).exists()}


def model_name(measured, model):
    count = measured.parameters.get(model)
    return f"{model} ({count:,})" if count else model


def cell(row):
    """A speedup with its interval, or why it has none: never a bare figure."""
    if row["speedup_low"] is None:
        return row["speedup_missing_interval"] or "no interval"
    return f"{row['speedup']:.3f} [{row['speedup_low']:.3f}, {row['speedup_high']:.3f}]"


def speedup_table(curves):
    """Per model and GPU count of the (measured, gpus) given: the speedup at every measured batch, the break-even with
    its interval, the bands of no clear difference, all as the analyzer says them."""
    batches = sorted({r["global_batch"] for measured, gpus in curves for r in measured.scaling if r["gpus"] == gpus})
    lines = ["| model | GPUs | " + " | ".join(f"batch {b}" for b in batches) +
             " | break-even [95%] | no clear difference |", "|---" * (len(batches) + 4) + "|"]
    counts = [gpus for _, gpus in curves]
    for measured, gpus in curves:
        # A GPU count measured on two machines says which row is whose.
        label = f"{gpus} ({pathlib.PurePosixPath(measured.path).parent.name})" if counts.count(gpus) > 1 else gpus
        for model in measured.models(gpus):
            cells = {r["global_batch"]: cell(r) for r in measured.scaling if r["gpus"] == gpus and r["model"] == model}
            curve = measured.curve(model, gpus)
            break_even = curve["break_even"] if curve else "one batch: no curve"
            bands = curve["no_clear_difference"] if curve else "—"
            lines.append(f"| {model_name(measured, model)} | {label} | " +
                         " | ".join(cells.get(b, "—") for b in batches) + f" | {break_even} | {bands} |")
    return "\n".join(lines)


def trials_text(measured, gpus):
    counts = sorted({r["trials"] for r in measured.scaling if r["gpus"] == gpus})
    return f"{counts[0]} trials" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} trials"


def curve_sentences(measured, gpus):
    """Per model, the analyzer's verdicts by batch; which model is faster from the smaller batch; the exposed
    all-reduce."""
    lines = []
    faster_from = {}
    for model in measured.models(gpus):
        curve = measured.curve(model, gpus)
        if curve is None:
            continue
        lines.append(f"- **{model} on {gpus} GPUs**: {curve['verdicts']}.")
        faster_from[model] = curve["faster_from_batch"]
    paying = sorted((batch, model) for model, batch in faster_from.items() if batch is not None)
    never = [model for model, batch in faster_from.items() if batch is None]
    if len(paying) >= 2 and paying[0][0] < paying[1][0]:
        lines.append(f"- {paying[0][1]} pays first: faster than 1 GPU at every measured batch from {paying[0][0]}, " +
                     ", ".join(f"{m} from {b}" for b, m in paying[1:]) + ".")
    elif len(paying) >= 2:
        lines.append(f"- Both models are faster than 1 GPU at every measured batch from {paying[0][0]}.")
    elif paying and never:
        lines.append(f"- Only {paying[0][1]} is faster than 1 GPU at every measured batch from some batch on (from "
                     f"{paying[0][0]}); {' and '.join(never)} is not faster at the largest batch measured.")
    elif paying:
        lines.append(f"- {paying[0][1]} is faster than 1 GPU at every measured batch from {paying[0][0]}.")
    elif len(never) == 1:
        lines.append(f"- {never[0]} is not faster than 1 GPU at the largest batch measured.")
    elif never:
        lines.append("- Neither model is faster than 1 GPU at the largest batch measured.")
    exposed = exposed_allreduce(measured, gpus)
    if exposed:
        lines.append(f"- The exposed all-reduce (the part of the {gpus}-GPU step that waits for the gradients' "
                     f"reduction; mean of the phase-marked runs): {exposed}.")
    return "\n".join(prose(line, "  ") for line in lines)


def exposed_allreduce(measured, gpus):
    parts = []
    for model in measured.models(gpus):
        phases = [p for p in measured.phases if p["gpus"] == gpus and p["model"] == model and
                  p["exposed_comm_ms"] is not None]
        if not phases:
            continue
        ms = [p["exposed_comm_ms"] for p in phases]
        share = [p["exposed_comm_share_percent"] for p in phases]
        parts.append(f"{model} {min(ms):.4f} to {max(ms):.4f} ms over the batches measured ({min(share):.0f}% to "
                     f"{max(share):.0f}% of the step)")
    return "; ".join(parts)


def grid_command(gpus):
    return (f"mpirun -np {gpus} build/mgpu_bench --model medium,large --batch {GRID_BATCHES} --output grid.h5")


def not_archived(gpus, prefix):
    return (prose(f"The headline grid on {gpus} GPUs (medium and large at global batch "
                  f"{GRID_BATCHES.replace(',', ', ')}, on 1 and {gpus} GPUs, by the default method: the default timing "
                  f"and `--trials auto`) is not yet archived. On a machine of {gpus} GPUs") +
            f"\n\n    {grid_command(gpus)}\n\n" +
            prose(f"measures it and `build/mgpu_analyze report grid.h5` gives its table, break-evens and bands; "
                  f"archived under `bench/results/`, `bench/generate_docs.py` draws this {prefix} from it."))


def grid_answer(root, context):
    """README's answer: per archived grid its table, the plot, and the sentences the data give."""
    grids = context["grids"]
    if not grids:
        return not_archived(2, "section")
    curves = [(measured, n) for _, measured in sorted(grids.items()) for n in measured.gpu_counts]
    machines = "; ".join(f"{measured.machine(n)}, {trials_text(measured, n)} per pair, {measured.source_link()}"
                         for measured, n in curves)
    parts = [prose(f"The speedup of N GPUs over 1 at the same global batch with its 95% interval over the trial means, "
                   f"by the default command's method; the break-even batch with its interval; the batches with no "
                   f"clear difference (the interval within 2% of 1). Measured on {machines}:"), speedup_table(curves)]
    parts += [curve_sentences(measured, n) for measured, n in curves]
    parts.append("![Speedup against global batch, bands of no clear difference shaded](docs/figures/speedup_vs_batch.svg)")
    missing = [gpus for gpus in GRIDS if gpus not in grids]
    if missing:
        parts.append(prose(f"The grid on {', '.join(map(str, missing))} GPUs is not yet archived "
                           f"(`{grid_command(missing[0])}`)."))
    return "\n\n".join(parts)


def study_nvlink(root, context):
    """docs/study.md: the headline grid on 2 GPUs over NVLink, the same cells as README's."""
    measured = context["grids"].get(2)
    if measured is None:
        return not_archived(2, "block")
    return "\n\n".join([prose(f"On {measured.machine(2)} ({trials_text(measured, 2)} per pair; "
                              f"{measured.source_link('../')}):"), speedup_table([(measured, 2)]),
                        curve_sentences(measured, 2)])


def study_pcie(root, context):
    """docs/study.md: the study's grid through host memory, per model, with the analyzer's verdicts."""
    measured = context["pcie"]
    if measured is None:
        return prose("The study's grid with the `pcie-host-bridge` preset by the default method is not yet archived as "
                     "a results file: `PRESETS=pcie-host-bridge bash bench/run_study.sh DIR` measures it (its file is "
                     "`DIR/study-pcie-host-bridge.h5`), and archived under `bench/results/`, "
                     "`bench/generate_docs.py` draws this block from it.")
    parts = [prose(f"On {measured.machine(2)} with the `pcie-host-bridge` preset ({trials_text(measured, 2)} per pair; "
                   f"{measured.source_link('../')}):")]
    for model in measured.models(2):
        pairs = sorted((r for r in measured.scaling if r["gpus"] == 2 and r["model"] == model),
                       key=lambda r: r["global_batch"])
        parts.append("\n".join([f"| {model} | " + " | ".join(str(r["global_batch"]) for r in pairs) + " |",
                                "|---" * (len(pairs) + 1) + "|",
                                "| speedup, 2 GPUs | " + " | ".join(cell(r) for r in pairs) + " |"]))
    parts.append(curve_sentences(measured, 2))
    return "\n\n".join(parts)


def verdict_example(root, context):
    """docs/verdict.md: the default command's verdict on GPUs, as mgpu_bench prints it: the lines of one curve."""
    measured = context["grids"].get(2)
    if measured is None:
        return prose("The verdict of the default command on GPUs is shown here once the headline grid is archived "
                     "(README, \"The answer, measured\"); the CPU fallback's first run below ends with its verdict.")
    answer = measured.json["answer"]
    model = measured.models(2)[0]
    lines = [answer["lines"][0]]
    for pair in answer["pairs"]:
        if pair["gpus"] == 2 and pair["model"] == model:
            lines += pair["lines"]
    lines += [c["line"] for c in answer["break_evens"] if c["gpus"] == 2 and c["model"] == model]
    return (prose(f"The verdict's lines of {model} on {measured.machine(2)}, from the headline grid "
                  f"({measured.source_link('../')}):") + "\n\n```\n" + "\n".join("# " + line for line in lines) +
            "\n```")


def peer_probe_rates(root):
    """step_floor.ProbeRates of the peer table's archived probe."""
    import h5py  # the docs' other blocks need none; CTest runs this with an interpreter that has it
    with tarfile.open(root / PEER_PROBE) as archive, tempfile.TemporaryDirectory() as directory:
        archive.extract("results/probe.h5", directory)
        with h5py.File(pathlib.Path(directory) / "results" / "probe.h5", "r") as f:
            return step_floor.ProbeRates(f["probe"])


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


def first_run(root, context):
    """The CPU fallback's first run as build-and-run printed it: its revision, time stamp, hashes and progress lines
    left out, of each configuration's runs the first two and the phase-marked one."""
    text = (root / FIRST_RUN).read_text().rstrip("\n")
    text = re.sub(r"\(git [0-9a-f]{7,}(-dirty)?\)", "(git <revision>)", text)
    text = re.sub(r"mgpu_bench_\d{8}T\d{6}Z\.h5", "mgpu_bench_<UTC time>.h5", text)
    text = re.sub(r"(FNV-1a 64 (?:of \d+ parameters: )?)0x[0-9a-f]+", r"\g<1>0x...", text)  # differs every job
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
    return "```\n" + "\n".join(kept) + "\n```"


def compare_example(root, context):
    """README: compare's output on two runs of one command on the CPU fallback, as it printed it."""
    lines = (root / COMPARE).read_text().rstrip("\n").splitlines()
    return (prose(f"Two runs of one build on the CPU fallback, whose timings say nothing about GPUs "
                  f"(`{lines[0].lstrip('$ ')}`, then the same with `--output after.h5`; [{COMPARE}]({COMPARE})):") +
            "\n\n```\n" + "\n".join(lines[1:]) + "\n```")


def help_text(*command):
    """A binary's --help, as it prints it."""
    run = subprocess.run(list(command) + ["--help"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"generate_docs: {' '.join(command)} --help failed: {run.stderr.strip()}")
    return "```\n" + run.stdout.rstrip("\n") + "\n```"


# Each page's generated blocks: name -> text of (root, context).
BLOCKS = {"README.md": {"grid-answer": grid_answer, "compare-example": compare_example},
          "docs/study.md": {"pcie-grid": study_pcie, "nvlink-answer": study_nvlink},
          "docs/performance.md": {"peer-table": peer_table},
          "docs/cli.md": {"help-mgpu_bench": lambda root, context: help_text(BENCH),
                          "help-allreduce": lambda root, context: help_text(BENCH, "allreduce"),
                          "help-probe": lambda root, context: help_text(BENCH, "probe")},
          "docs/cli-analyze.md": {"help-mgpu_analyze": lambda root, context: help_text(ANALYZE),
                                  "help-trace": lambda root, context: help_text(ANALYZE, "trace")},
          "docs/verdict.md": {"verdict-example": verdict_example, "first-run": first_run}}
BLOCKS["docs/cluster.md"] = cluster_docs.blocks(lambda: ANALYZE)  # bench/cluster_docs.py
# A block's text may be empty (a new block): its end marker then follows the opening line at once.
BLOCK = re.compile(r"(<!-- generated: (\S+) -->\n)((?:(?!<!-- generated: ).)*?\n)??(<!-- generated: end -->)", re.S)


def plot_problems(root, grids, check):
    """README's plot is mgpu_analyze's speedup plot of every archived grid; without one there is none."""
    plot = root / PLOT
    if not grids:
        if not plot.exists():
            return []
        if not check:
            plot.unlink()
        return [f"{PLOT} exists, but no grid is archived to draw it from"]
    with tempfile.TemporaryDirectory() as plots:
        report(root, [g.path for _, g in sorted(grids.items())], pathlib.Path(plots))
        drawn = (pathlib.Path(plots) / "speedup_vs_batch.svg").read_text()
    if plot.exists() and plot.read_text() == drawn:
        return []
    if not check:
        plot.parent.mkdir(exist_ok=True)
        plot.write_text(drawn)
    return [f"{PLOT} differs from what mgpu_analyze draws from {', '.join(g.path for g in grids.values())}"]


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
    context = {"grids": archived(root),
               "pcie": Measured(root, STUDY_PCIE) if (root / STUDY_PCIE).exists() else None}
    stale = plot_problems(root, context["grids"], check)
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
