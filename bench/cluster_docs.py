"""Purpose: docs/cluster.md's generated blocks (bench/generate_docs.py calls blocks()): the cluster all-reduce model
against the published tables of bench/results/published-allreduce/ (`mgpu_analyze predict --published`), and the
predicted answer on nodes of 4 and 8 GPUs for both presets from the archived probe and all-reduce sweeps of
bench/results/h200x4-2026-11-28c/ (`mgpu_analyze predict --gpus-per-node G --link ib400`), both read from the
analyzer's JSON.
"""
import json
import subprocess
import sys

PUBLISHED = "bench/results/published-allreduce"
TABLES = ["nccl-tests-309.json", "nccl-tests-119.json"]  # the fitted one first, then the one held out
MACHINE = "bench/results/h200x4-2026-11-28c"  # probe.h5, allreduce_n2.h5 and allreduce_n4.h5 of 4 x H200
BATCHES = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]  # every one divisible by 32 GPUs
SHOWN = 4096  # the largest global batch the probe timed on one GPU
MIB = 1 << 20


def predict(root, analyze, args):
    """mgpu_analyze predict ARGS --format json, run in ROOT: {table key: rows as dicts}."""
    run = subprocess.run([analyze, "predict", *args, "--format", "json"], cwd=root, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"cluster_docs: mgpu_analyze predict {' '.join(args)} failed: {run.stderr.strip()}")
    tables = json.loads(run.stdout)["tables"]
    return {key: [dict(zip(t["columns"], [row[c] for c in t["columns"]])) for row in t["rows"]]
            for key, t in tables.items()}


def size_text(nbytes):
    """8 B, 1 MiB, 22 MiB+8, 16 GiB."""
    if nbytes < MIB:
        return f"{nbytes:,} B"
    mib, rest = divmod(nbytes, MIB)
    if rest == 0 and mib % 1024 == 0:
        return f"{mib // 1024} GiB"
    return f"{mib} MiB" + (f"+{rest}" if rest else "")


def validation(root, analyze):
    """Per published table: its source and cluster, then size, published and predicted time, error (and the candidate
    where it changes with size); the worst |error| from 1 to 128 MiB and below 1 MiB."""
    parts = []
    for name in TABLES:
        t = json.loads((root / PUBLISHED / name).read_text())
        rows = next(iter(predict(root, analyze, ["--published", f"{PUBLISHED}/{name}"]).values()))
        fit = "fitted to" if t["used_to_fit"] else "held out"
        lines = [f"[{t['name']}]({t['url']}), {fit}: {t['nodes']} nodes × {t['gpus_per_node']} {t['gpu']}, "
                 f"{t['nics_per_node']} × {t['link']} a node, NCCL {t['nccl']}.", ""]
        one_candidate = len({(r["algorithm"], r["protocol"]) for r in rows}) == 1
        header = "| size | published (µs) | predicted (µs) | error |" + ("" if one_candidate else " candidate |")
        lines += [header, "|---" * header.count(" |") + "|"]
        for r in rows:
            lines.append(f"| {size_text(r['bytes'])} | {r['published_us']:,.1f} | {r['predicted_us']:,.1f} | "
                         f"{r['error_percent']:+.1f}% |" + ("" if one_candidate else
                                                            f" {r['algorithm']} {r['protocol']} |"))
        bands = []
        for label, inside in (("from 1 to 128 MiB", lambda b: MIB <= b <= 128 * MIB), ("below 1 MiB", lambda b: b < MIB)):
            errors = [abs(r["error_percent"]) for r in rows if inside(r["bytes"])]
            if errors:
                bands.append(f"{max(errors):.1f}% {label} ({len(errors)} row{'s' if len(errors) > 1 else ''})")
        candidate = f" Every row: {rows[0]['algorithm']} {rows[0]['protocol']}." if one_candidate else ""
        lines += ["", "Worst |error|: " + ", ".join(bands) + "." + candidate]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def pays_from(row):
    """The break-even global batch: 2,504 (one rising crossing), or the analyzer's summary of every crossing (or of why
    there is none in the batches predicted)."""
    if row["break_even_batch"] is not None:
        return f"{row['break_even_batch']:,.0f}"
    return row["summary"]


def answer(root, analyze):
    """Per preset and node size (4 and 8 GPUs), on 1, 2 and 4 nodes: the gradient's all-reduce (* measured), the step,
    speedup and ceiling at the shown batch, and the break-even global batch; and the step on 1 GPU."""
    probe = [f"--probe={MACHINE}/probe.h5", f"--allreduce={MACHINE}/allreduce_n2.h5",
             f"--allreduce={MACHINE}/allreduce_n4.h5", "--link", "ib400",
             "--batch", ",".join(str(b) for b in BATCHES)]
    lines = [f"| model | nodes of | all-reduce (ms) | step at batch {SHOWN:,} (ms) | speedup | ceiling | pays from batch |",
             "|---" * 7 + "|"]
    for model in ("medium", "large"):
        for per_node in (4, 8):
            tables = predict(root, analyze, probe + ["--model", model, "--gpus-per-node", str(per_node)])
            step = {(r["gpus"], r["global_batch"]): r for r in tables["prediction"]}
            reduce = {r["gpus"]: r for r in tables["cluster_allreduce"]}
            pays = {r["gpus"]: pays_from(r) for r in tables["break_even"]}
            counts = [nodes * per_node for nodes in (1, 2, 4)]
            cells = [", ".join(f"{reduce[n]['allreduce_ms']:.3f}" + ("*" if reduce[n]["algorithm"] is None else "")
                               for n in counts)]
            cells += [", ".join(f"{step[(n, SHOWN)][key]:{form}}" for n in counts)
                      for key, form in (("step_ms", ".3f"), ("speedup", ".2f"), ("ceiling", ".2f"))]
            cells.append(", ".join(pays[n] for n in counts))
            one = f" (1 GPU: {step[(1, SHOWN)]['step_ms']:.3f} ms)" if per_node == 4 else ""
            lines.append(f"| {model}{one} | {per_node} GPUs | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def blocks(analyze):
    """docs/cluster.md's blocks for generate_docs.py's BLOCKS; `analyze` gives the mgpu_analyze binary when called."""
    return {"cluster-validation": lambda root, report: validation(root, analyze()),
            "cluster-answer": lambda root, report: answer(root, analyze())}
