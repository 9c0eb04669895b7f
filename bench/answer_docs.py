"""Purpose: the measured answer of README.md (and the blocks of docs/study.md and docs/verdict.md that show its cells),
for bench/generate_docs.py: per GPU count the best archived source of the headline grid, every figure, verdict,
break-even and band from one `mgpu_analyze report --format json` of the sources chosen, and its speedup plot.

The best source of a GPU count is the first of SOURCES that is archived: the default method's file (the default
timing, in trials: its intervals cover independent processes) where one is, else the grid that
bench/large_batch_performance.sh archived (one process per GPU count, `--timing step`), read from its tarball, with
that method stated beside its table. A file archived where the default method's goes, measured otherwise, is refused.
"""
import json
import pathlib
import subprocess
import sys
import tarfile
import textwrap

GRID_BATCHES = "8,32,128,512,1024,2048,4096"
MODEL_ORDER = ("medium", "large")  # the study's models first, others after
# Independent one-trial jobs of single pairs (bench/reproducibility_check.sh's tables, several builds): where their
# verdicts disagree, the pair is too close to call.
REPRODUCIBILITY = "bench/results/h200x4-2026-11-26/plan_convergence.md"


def prose(text, indent=""):
    """A paragraph or list item wrapped as the pages are, at 120 characters."""
    return textwrap.fill(text, 120, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def report(analyze, files, out_dir=None):
    """mgpu_analyze's report of results files, as JSON (its plots into out_dir when given)."""
    command = [analyze, "report", *map(str, files), "--format", "json"]
    if out_dir is not None:
        command += ["--out", str(out_dir)]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"generate_docs: {analyze} report {' '.join(map(str, files))} failed: {run.stderr.strip()}")
    return json.loads(run.stdout)


class Source:
    """One archived results file: a file of the archive, or a member of an archived tarball."""

    def __init__(self, path, member=None, default_method=True):
        self.path, self.member, self.default_method = path, member, default_method

    def archived(self, root):
        return (root / self.path).exists()

    def local(self, root, work):
        """A path mgpu_analyze can read: the file itself, or the member extracted into `work`."""
        if self.member is None:
            return root / self.path
        target = work / pathlib.PurePosixPath(self.path).name.split(".")[0] / pathlib.PurePosixPath(self.member).name
        target.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(root / self.path) as archive:
            target.write_bytes(archive.extractfile(self.member).read())
        return target

    def link(self, prefix=""):
        """The file as a page cites it: linked (named within bench/results/), with the member named."""
        name = f"[{self.path.removeprefix('bench/results/')}]({prefix}{self.path})"
        return f"{name}: `{self.member}`" if self.member else name


def grid_sources(gpus):
    """Where the headline grid on `gpus` GPUs is archived, best first."""
    return [Source(f"bench/results/grid-h200x{gpus}/grid.h5"),
            Source(f"bench/results/grid-h200x4/large_batch_results_{gpus}.tar.gz", "results/ours.h5",
                   default_method=False)]


SOURCES = {gpus: grid_sources(gpus) for gpus in (2, 4)}


def rows(report_json, table):
    found = report_json["tables"].get(table)
    return [] if found is None else found["rows"]


def span(values, unit, plural=None):
    """"1 trial", "5 runs", "3 to 5 runs"."""
    low, high = min(values), max(values)
    many = plural or unit + "s"
    return f"{low} {unit if low == 1 else many}" if low == high else f"{low} to {high} {many}"


class Curve:
    """What the report says of one GPU count, from the source chosen for it."""

    def __init__(self, answer, gpus, source, local):
        self.gpus, self.source = gpus, source
        j = answer.json
        self.configurations = [c for c in rows(j, "configurations") if pathlib.Path(c["file"]) == local]
        self.pairs = [p for p in j["answer"]["pairs"] if p["gpus"] == gpus]
        self.scaling = {(r["model"], r["global_batch"]): r for r in rows(j, "scaling") if r["gpus"] == gpus}
        self.curves = [c for c in rows(j, "break_even") if c["gpus"] == gpus]
        self.phases = [p for p in rows(j, "phases") if p["gpus"] == gpus]
        self.provenance = next(p for p in j["provenance"] if pathlib.Path(p["file"]) == local)
        timings = sorted({c["timing"] for c in self.configurations})
        once = [p for p in self.pairs if p["trials"] < 2]
        if source.default_method and (timings != ["interleaved"] or once or not self.pairs):
            sys.exit(f"generate_docs: {source.path} is not measured by the default method (timing "
                     f"{', '.join(timings)}, {len(once)} of {len(self.pairs)} pairs in one trial): published figures "
                     "need the default timing and trials")
        self.timings = timings

    def models(self):
        found = {model for model, _ in self.scaling}
        return [m for m in MODEL_ORDER if m in found] + sorted(found - set(MODEL_ORDER))

    def curve(self, model):
        """The analyzer's break-even row of a model's curve (the headline grid has one curve each)."""
        found = [c for c in self.curves if c["model"] == model]
        if len(found) > 1:
            sys.exit(f"generate_docs: {self.source.path} holds {len(found)} curves of {model} on {self.gpus} GPUs: "
                     f"{', '.join(c['curve'] for c in found)}")
        return found[0] if found else None

    def device(self):
        """The GPUs' name ("NVIDIA H200"), or None on the CPU fallback."""
        multi = [c for c in self.configurations if int(c["gpus"]) == self.gpus]
        if all(c["device"] == "cpu" for c in multi):
            return None
        return ", ".join(sorted({c["gpu_names"].split(",")[0] for c in multi}))

    def machine(self):
        return f"the CPU fallback with {self.gpus} ranks" if self.device() is None else f"{self.gpus} × {self.device()}"

    def trials_text(self):
        return span([p["trials"] for p in self.pairs], "trial") if self.pairs else "no pairs"

    def method(self):
        """How the source measured: its timing, runs and trials, and what its intervals cover."""
        runs = span([int(c["runs_total"]) for c in self.configurations], "run")
        kept = span([int(c["runs_kept"]) for c in self.configurations], "kept", "kept")
        timing = ", ".join(f"`--timing {t}`" for t in self.timings)
        if all(p["trials"] >= 2 for p in self.pairs):
            return (f"{timing}, {self.trials_text()} per cell, each one process of {runs} ({kept} by the outlier "
                    "screen); the intervals are over the trial means: they cover independent processes")
        return (f"{timing}, {runs} per configuration ({kept} by the outlier screen), {self.trials_text()} per cell: "
                "the intervals are over the runs of one process, not over independent processes")

    def written(self):
        """When and by which revision the source was written."""
        return f"{self.provenance['created_utc'][:10]}, git {self.provenance['git_revision'][:7]}"

    def cell(self, model, batch):
        """The speedup with its interval, or why it has none: never a bare figure."""
        row = self.scaling.get((model, batch))
        if row is None:
            return "—"
        if row["speedup_low"] is None:
            return row["speedup_missing_interval"] or "no interval"
        return f"{row['speedup']:.3f} [{row['speedup_low']:.3f}, {row['speedup_high']:.3f}]"

    def verdict(self, model, batch):
        found = [p["verdict"] for p in self.pairs if p["model"] == model and p["global_batch"] == batch]
        return found[0] if found else "—"

    def table(self):
        """Per measured batch, each model's speedup with its interval and the analyzer's verdict."""
        models = self.models()
        batches = sorted({batch for _, batch in self.scaling})
        lines = [f"| {self.gpus} GPUs, global batch | " + " | ".join(f"{m}: speedup [95%] | {m}: verdict" for m in models) + " |",
                 "|---" * (2 * len(models) + 1) + "|"]
        for batch in batches:
            cells = [f"{self.cell(m, batch)} | {self.verdict(m, batch)}" for m in models]
            lines.append(f"| {batch} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def statements(self):
        """The break-even statement and the bands of every curve, as mgpu_analyze report prints them."""
        lines = []
        for model in self.models():
            c = self.curve(model)
            if c is not None:
                lines.append(prose(f"- {c['curve']}: {c['statement']}; no clear difference: "
                                   f"{c['no_clear_difference']}.", "  "))
        return "\n".join(lines)

    def exposed_allreduce(self):
        """The exposed all-reduce of the phase-marked runs, per model ("" where no phase was measured)."""
        parts = []
        for model in self.models():
            marked = [p for p in self.phases if p["model"] == model and p["exposed_comm_ms"] is not None]
            if marked:
                ms = [p["exposed_comm_ms"] for p in marked]
                share = [p["exposed_comm_share_percent"] for p in marked]
                parts.append(f"{model} {min(ms):.4f} to {max(ms):.4f} ms over the batches measured "
                             f"({min(share):.0f}% to {max(share):.0f}% of the step)")
        if not parts:
            return ""
        return prose(f"- The exposed all-reduce (the part of the {self.gpus}-GPU step that waits for the gradients' "
                     f"reduction; mean of the phase-marked runs): {'; '.join(parts)}.", "  ")

    def block(self, prefix=""):
        """Its provenance, table, break-evens and bands (docs/study.md)."""
        return "\n\n".join(part for part in [provenance([self], prefix), self.table(), self.statements(),
                                             self.exposed_allreduce()] if part)


def provenance(curves, prefix=""):
    """One sentence per kind of source: the GPU counts it gives, the machine, when and by which revision it was
    written, how it measured (timing, runs, trials) and what its intervals cover, and the files."""
    groups = {}
    for curve in curves:
        groups.setdefault((curve.device(), curve.written(), curve.method()), []).append(curve)
    sentences = []
    for (device, written, method), members in groups.items():
        counts = " and ".join(str(c.gpus) for c in members)
        machine = f"{counts} ranks of the CPU fallback" if device is None else f"{counts} × {device}"
        files = ", ".join(c.source.link(prefix) for c in members)
        sentences.append(f"{machine} against 1, {written}, {method} ({files})")
    return prose("Measured on " + "; ".join(sentences) + ".")


class Answer:
    """The sources chosen per GPU count and the one report of them all (its plots drawn into `work`)."""

    def __init__(self, root, analyze, sources, work):
        self.root, self.work = root, work
        chosen = {gpus: next((s for s in candidates if s.archived(root)), None) for gpus, candidates in sources.items()}
        self.missing = [gpus for gpus, s in chosen.items() if s is None]
        chosen = {gpus: s for gpus, s in chosen.items() if s is not None}
        locals_ = {gpus: s.local(root, work).resolve() for gpus, s in chosen.items()}
        self.json = None
        self.curves = {}
        if chosen:
            self.json = report(analyze, sorted(set(locals_.values())), work / "plots")
            self.curves = {gpus: Curve(self, gpus, s, locals_[gpus]) for gpus, s in sorted(chosen.items())}

    def plot(self):
        """The analyzer's speedup plot of every source chosen (None without one)."""
        return (self.work / "plots" / "speedup_vs_batch.svg").read_text() if self.curves else None


def grid_command(gpus):
    return f"mpirun -np {gpus} build/mgpu_bench --model medium,large --batch {GRID_BATCHES} --output grid.h5"


def not_archived(gpus, what):
    return (prose(f"The headline grid on {gpus} GPUs (medium and large at global batch "
                  f"{GRID_BATCHES.replace(',', ', ')}, on 1 and {gpus} GPUs, by the default method: the default timing "
                  f"and `--trials auto`) is not yet archived. On a machine of {gpus} GPUs") +
            f"\n\n    {grid_command(gpus)}\n\n" +
            prose(f"measures it and `build/mgpu_analyze report grid.h5` gives its table, break-evens and bands; "
                  f"archived under `bench/results/`, `bench/generate_docs.py` draws this {what} from it."))


def pays_first(curves):
    """Which model's speedup crosses 1 at the smaller batch, per GPU count, in the analyzer's break-even words."""
    sentences, firsts = [], set()
    for gpus, curve in curves.items():
        rising = sorted((c["break_even_batch"], c["model"], c["break_even"]) for c in curve.curves
                        if c["kind"] == "rising" and c["break_even_batch"] is not None)
        if len(rising) < 2:
            continue
        firsts.add(rising[0][1])
        sentences.append(f"on {gpus} GPUs {rising[0][1]}'s speedup crosses 1 at global batch {rising[0][2]}, " +
                         ", ".join(f"{model}'s at {text}" for _, model, text in rising[1:]))
    if not sentences:
        return ""
    lead = f"{next(iter(firsts)).capitalize()} pays first" if len(firsts) == 1 else "Which model pays first differs"
    return f"{lead}: {'; '.join(sentences)}."


def job_rows(text):
    """The reproducibility tables' rows: (pair, speedup, verdict) of each independent job."""
    words = {"slows this step down": "slower", "speeds this step up": "faster",
             "no clear difference": "no clear difference", "no significant difference": "no significant difference"}
    found = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[1].isdigit() and cells[3].startswith("["):
            verdict = next((w for phrase, w in words.items() if phrase in cells[4]), cells[4])
            found.append((cells[0], float(cells[2]), verdict))
    return found


def too_close_to_call(root):
    """The pairs whose independent jobs disagree on the verdict, from the archived reproducibility tables."""
    path = root / REPRODUCIBILITY
    if not path.exists():
        return ""
    by_pair = {}
    for pair, speedup, verdict in job_rows(path.read_text()):
        by_pair.setdefault(pair, []).append((speedup, verdict))
    sentences = []
    for pair, jobs in by_pair.items():
        verdicts = [v for _, v in jobs]
        order = ["slower", "no clear difference", "no significant difference", "faster"]
        counts = ", ".join(f"{v} in {verdicts.count(v)}" for v in sorted(set(verdicts), key=(order + verdicts).index))
        speedups = [s for s, _ in jobs]
        what = "too close to call" if len(set(verdicts)) > 1 else "the same verdict in every job"
        sentences.append(f"{pair}: {what} ({len(jobs)} jobs, speedups {min(speedups):.3f} to {max(speedups):.3f}; "
                         f"{counts})")
    return (f"Independent jobs of one pair, each one process with a narrow interval over its own runs "
            f"([{REPRODUCIBILITY}]({REPRODUCIBILITY}), several builds), show what one process's interval leaves out: "
            + "; ".join(sentences) + ".")


def grid_answer(answer, root):
    """README's answer: per GPU count its provenance, table and break-evens; the plot; which model pays first and
    which pairs are too close to call."""
    if not answer.curves:
        return not_archived(2, "section")
    curves = list(answer.curves.values())
    parts = [prose("The speedup of N GPUs over 1 at the same global batch with its 95% interval and the analyzer's "
                   "verdict, from the best archived source of each GPU count. " + provenance(curves))]
    parts += [curve.table() for curve in curves]
    parts.append("![Speedup against global batch, bands of no clear difference shaded](docs/figures/speedup_vs_batch.svg)")
    parts.append("\n".join(curve.statements() for curve in curves))
    closing = " ".join(s for s in [pays_first(answer.curves), too_close_to_call(root)] if s)
    if closing:
        parts.append(prose(closing))
    if answer.missing:
        parts.append(prose(f"The grid on {', '.join(map(str, answer.missing))} GPUs is not yet archived "
                           f"(`{grid_command(answer.missing[0])}`)."))
    return "\n\n".join(parts)


def study_nvlink(answer):
    """docs/study.md: the headline grid on 2 GPUs over NVLink, the same cells as README's."""
    curve = answer.curves.get(2)
    return not_archived(2, "block") if curve is None else curve.block("../")


def verdict_example(answer):
    """docs/verdict.md: the verdict's lines of one curve on 2 GPUs, as mgpu_bench prints them."""
    curve = answer.curves.get(2)
    if curve is None:
        return prose("The verdict of the default command on GPUs is shown here once the headline grid is archived "
                     "(README, \"The answer, measured\"); the CPU fallback's first run below ends with its verdict.")
    model = curve.models()[0]
    lines = [answer.json["answer"]["lines"][0]]
    for pair in curve.pairs:
        if pair["model"] == model:
            lines += pair["lines"]
    lines += [c["line"] for c in answer.json["answer"]["break_evens"] if c["gpus"] == 2 and c["model"] == model]
    return (prose(f"The verdict's lines of {model} on {curve.machine()}, from the source of README's answer "
                  f"({curve.source.link('../')}; {curve.method()}):") + "\n\n```\n" +
            "\n".join("# " + line for line in lines) + "\n```")
