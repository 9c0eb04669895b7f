"""Purpose: docs/cluster.md's generated blocks (bench/generate_docs.py calls blocks()): the cluster all-reduce model
against the published tables of bench/results/published-allreduce/ (`mgpu_analyze predict --published`), its error
in-sample and held out, and the predicted answer on 1, 2 and 4 nodes of 4 and of 8 GPUs for both presets, each speedup
with its error band, from the archived probe, all-reduce sweeps and measured grid of one start of a 4 x H200 machine
(`mgpu_analyze predict --gpus-per-node G --link ib400 --published ... --check grid.h5`), all read from the analyzer's
JSON: no figure here is computed apart from it.
"""
import contextlib
import json
import pathlib
import subprocess
import sys
import tarfile
import tempfile
import textwrap

PUBLISHED = "bench/results/published-allreduce"
TABLES = ["nccl-tests-309.json", "nccl-tests-119.json"]  # the fitted one first, then the one held out
# One start of 4 x H200: probe.h5, allreduce_n2.h5, allreduce_n4.h5 and the default grid (grid.h5: medium and large
# at global batch 8 to 4096 on 1, 2 and 4 GPUs) measured after the step model's constants were written; predicting
# that grid (--check) gives the step model's own error.
MACHINE = "bench/results/model-check-h200x4/validation_default.tar.xz"
BATCHES = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]  # every one divisible by 32 GPUs
SHOWN = 4096  # the largest global batch the probe timed on one GPU
NODE_SIZES = (4, 8)
NODE_COUNTS = (1, 2, 4)
NEAR = 2  # held-out rows within this factor of a model's gradient answer for its size
MIB = 1 << 20


def predict(root, analyze, args):
    """mgpu_analyze predict ARGS --format json, run in ROOT: {table key: {"rows": rows as dicts, "notes": notes}}."""
    run = subprocess.run([analyze, "predict", *args, "--format", "json"], cwd=root, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"cluster_docs: mgpu_analyze predict {' '.join(args)} failed: {run.stderr.strip()}")
    tables = json.loads(run.stdout)["tables"]
    return {key: {"rows": [dict(zip(t["columns"], [row[c] for c in t["columns"]])) for row in t["rows"]],
                  "notes": t["notes"]} for key, t in tables.items()}


def published_args():
    return [a for name in TABLES for a in ("--published", f"{PUBLISHED}/{name}")]


@contextlib.contextmanager
def machine(root):
    """The archived start of the machine, unpacked: its files' paths as predict's arguments."""
    with tempfile.TemporaryDirectory() as unpacked:
        with tarfile.open(root / MACHINE) as archive:
            archive.extractall(unpacked, members=[m for m in archive.getmembers() if m.isfile() and "/" not in m.name])
        files = pathlib.Path(unpacked)
        yield [f"--probe={files / 'probe.h5'}", f"--allreduce={files / 'allreduce_n2.h5'}",
               f"--allreduce={files / 'allreduce_n4.h5'}", f"--check={files / 'grid.h5'}"]


def cluster_predict(root, analyze, inputs, model, per_node):
    return predict(root, analyze, inputs + ["--model", model, "--gpus-per-node", str(per_node), "--link", "ib400",
                                            "--batch", ",".join(str(b) for b in BATCHES)] + published_args())


def table_key(name):
    """predict's key of a published table's rows: "nccl-tests #309" -> "published_nccl_tests_309"."""
    return "published_" + "_".join("".join(c if c.isalnum() else " " for c in name.lower()).split())


def prose(text):
    """A paragraph wrapped as the pages are, at 120 characters."""
    return textwrap.fill(text, 120, break_long_words=False, break_on_hyphens=False)


def size_text(nbytes):
    """8 B, 1 MiB, 22 MiB+8, 16 GiB."""
    if nbytes < MIB:
        return f"{nbytes:,} B"
    mib, rest = divmod(nbytes, MIB)
    if rest == 0 and mib % 1024 == 0:
        return f"{mib // 1024} GiB"
    return f"{mib} MiB" + (f"+{rest}" if rest else "")


def percent_range(errors):
    """'+12.5% to +18.6%' (or one value)."""
    low, high = f"{min(errors):+.1f}%", f"{max(errors):+.1f}%"
    return low if low == high else f"{low} to {high}"


def rows_table(t, rows):
    """One published table's rows: size, published and predicted time, error (and the candidate where it varies)."""
    one_candidate = len({(r["algorithm"], r["protocol"]) for r in rows}) == 1
    header = "| size | published (µs) | predicted (µs) | error |" + ("" if one_candidate else " candidate |")
    lines = [header, "|---" * header.count(" |") + "|"]
    for r in rows:
        lines.append(f"| {size_text(r['bytes'])} | {r['published_us']:,.1f} | {r['predicted_us']:,.1f} | "
                     f"{r['error_percent']:+.1f}% |" + ("" if one_candidate else
                                                        f" {r['algorithm']} {r['protocol']} |"))
    if one_candidate:
        lines += ["", f"Every row: {rows[0]['algorithm']} {rows[0]['protocol']}."]
    return lines


def gradient_bytes(root, analyze, inputs, model):
    """The model's gradient all-reduce in bytes, as predict states it."""
    return cluster_predict(root, analyze, inputs, model, 8)["cluster_allreduce"]["rows"][0]["gradient_bytes"]


def validation(root, analyze):
    """Per published table its source, cluster and rows against the model; then each table's error apart (in-sample,
    held out) and, held out, the rows near each model's gradient."""
    tables = predict(root, analyze, published_args())
    parts = []
    for name in TABLES:
        t = json.loads((root / PUBLISHED / name).read_text())
        key = table_key(t["name"])
        judged = "in-sample" if t["used_to_fit"] else "held out"
        parts.append("\n".join([f"[{t['name']}]({t['url']}), {judged}: {t['nodes']} nodes × {t['gpus_per_node']} "
                                f"{t['gpu']}, {t['nics_per_node']} × {t['link']} a node, NCCL {t['nccl']}.", ""]
                               + rows_table(t, tables[key]["rows"])))
    summary = tables["allreduce_model_error"]["rows"]
    lines = ["| table | judged | rows | constants fitted to them | error, from | to | worst \\|error\\| |",
             "|---" * 7 + "|"]
    for s in summary:
        fitted = "—" if s["constants_fitted"] is None else str(s["constants_fitted"])
        lines.append(f"| {s['table']} | {s['judged']} | {s['rows']} | {fitted} | {s['lowest_error_percent']:+.1f}% | "
                     f"{s['highest_error_percent']:+.1f}% | {s['worst_abs_error_percent']:.1f}% |")
    fitted = next(s for s in summary if s["judged"] == "in-sample")
    held = next(s for s in summary if s["judged"] == "held out")
    text = (f"In-sample ({fitted['table']}): the {fitted['constants_fitted']} constants fitted to the {fitted['rows']} "
            f"rows they are judged on, worst |error| {fitted['worst_abs_error_percent']:.1f}%; this checks the fit, not "
            f"the model. Held out ({held['table']}, not refitted): "
            f"{percent_range([held['lowest_error_percent'], held['highest_error_percent']])} over its {held['rows']} "
            "rows;")
    with machine(root) as inputs:
        for model in ("medium", "large"):
            size = gradient_bytes(root, analyze, inputs, model)
            near = [r for r in tables[table_key(held["table"])]["rows"] if size / NEAR <= r["bytes"] <= size * NEAR]
            where = f"within a factor of {NEAR} of {model}'s gradient ({size / MIB:.1f} MiB)"
            text += (f" {where}, " + (f"{percent_range([r['error_percent'] for r in near])} "
                                      f"({size_text(near[0]['bytes'])} to {size_text(near[-1]['bytes'])})"
                                      if near else "no row") + (";" if model == "medium" else "."))
    parts.append("\n".join(lines + ["", prose(text)]))
    return "\n\n".join(parts)


def gpus_text(nodes, per_node):
    return f"{nodes} × {per_node} = {nodes * per_node}"


def answer(root, analyze):
    """Per preset the 1-GPU step, then per node size and node count: the gradient's all-reduce and what gave it, the
    step, the speedup with its error band and the ceiling at the shown batch, and every crossing of 1 of the speedup
    curve and of its band's ends; then what the band carries."""
    lines = [f"| model | GPUs | all-reduce (ms) | all-reduce from | step at batch {SHOWN:,} (ms) | speedup [band] | "
             "ceiling | break-even global batch | at the band's low end | at its high end |", "|---" * 10 + "|"]
    band = None
    with machine(root) as inputs:
        for model in ("medium", "large"):
            for per_node in NODE_SIZES:
                tables = cluster_predict(root, analyze, inputs, model, per_node)
                step = {(r["gpus"], r["global_batch"]): r for r in tables["prediction"]["rows"]}
                reduce = {r["gpus"]: r for r in tables["cluster_allreduce"]["rows"]}
                crossings = {r["gpus"]: r for r in tables["break_even"]["rows"]}
                band = band or tables["error_band"]
                if per_node == NODE_SIZES[0]:
                    lines.append(f"| {model} | 1 | — | — | {step[(1, SHOWN)]['step_ms']:.3f} | — | — | — | — | — |")
                for nodes in NODE_COUNTS:
                    n = nodes * per_node
                    r, s, c = reduce[n], step[(n, SHOWN)], crossings[n]
                    source = "measured" if r["algorithm"] is None else f"model: {r['algorithm']} {r['protocol']}"
                    lines.append(f"| {model} | {gpus_text(nodes, per_node)} | {r['allreduce_ms']:.3f} | {source} | "
                                 f"{s['step_ms']:.3f} | {s['speedup']:.2f} [{s['speedup_low']:.2f}, "
                                 f"{s['speedup_high']:.2f}] | {s['ceiling']:.2f} | {c['summary']} | "
                                 f"{c['summary_low']} | {c['summary_high']} |")
    terms = {row["term"]: row for row in band["rows"]}
    reduce_error = terms["all-reduce (the cluster model's)"]
    speedup_error = terms["speedup (the step model's)"]
    lines += ["", prose(f"Band: a = {reduce_error['worst_abs_error_percent']:.1f}%, the all-reduce model's worst "
                        f"|error| over the {reduce_error['judged']} rows of {reduce_error['judged_on']}, carried "
                        "by every modelled all-reduce and by no measured one; s = "
                        f"{speedup_error['worst_abs_error_percent']:.1f}%, the step model's worst |speedup error| "
                        f"over the {speedup_error['judged']} speedups of the archived grid of the same machine "
                        "start.")]
    return "\n".join(lines)


def blocks(analyze):
    """docs/cluster.md's blocks for generate_docs.py's BLOCKS; `analyze` gives the mgpu_analyze binary when called."""
    return {"cluster-validation": lambda root, report: validation(root, analyze()),
            "cluster-answer": lambda root, report: answer(root, analyze())}
