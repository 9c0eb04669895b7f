"""Purpose: the console samples of README.md and docs/ (for bench/generate_docs.py), re-made by today's binaries from
archived results files, never pasted: compare's output on two archived runs of one command on the CPU fallback, and
the CPU fallback's first run and a one-rank job's verdict as `mgpu_bench replay` re-makes them from the jobs' results
files (CONSOLE: its tarball's before.h5, after.h5, mgpu_bench_<UTC time>.h5 and one-rank.h5).
"""
import re
import subprocess
import sys
import tarfile

from answer_docs import Source, prose, report

CONSOLE = "bench/results/cpu-console"  # README.md (how each file was made) and results.tar.gz (the files)
RESULTS = f"{CONSOLE}/results.tar.gz"


def command_of(analyze, path):
    """The command that wrote a results file, as a reader runs it here: `mpirun -np N build/mgpu_bench ARGS`."""
    found = report(analyze, [path])
    command_lines = found["provenance"][0]["command_lines"]
    ranks = max(int(c["gpus"]) for c in found["tables"]["configurations"]["rows"])
    arguments = command_lines[0].split(" ", 1)[1]
    return f"mpirun -np {ranks} build/mgpu_bench {arguments}"


def compare_example(root, analyze, work):
    """README: `mgpu_analyze compare before.h5 after.h5` on the archived runs, as today's analyzer prints it."""
    before, after = (Source(RESULTS, name).local(root, work) for name in ("before.h5", "after.h5"))
    run = subprocess.run([analyze, "compare", before.name, after.name], cwd=before.parent, capture_output=True,
                         text=True)
    if run.returncode != 0:
        sys.exit(f"generate_docs: {analyze} compare before.h5 after.h5 failed: {run.stderr.strip()}")
    return (prose(f"Two runs of one build on the CPU fallback, whose timings say nothing about GPUs "
                  f"(`{command_of(analyze, before)}`, then the same with `--output after.h5`; "
                  f"[{CONSOLE}/]({CONSOLE}/README.md)), compared by today's `build/mgpu_analyze`:") +
            "\n\n```\n$ build/mgpu_analyze compare before.h5 after.h5\n" + run.stdout.rstrip("\n") + "\n```")


def replayed(bench, path):
    """`mgpu_bench replay` of a results file, run where the file is (so it names the file as its job did)."""
    run = subprocess.run([bench, "replay", path.name], cwd=path.parent, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"generate_docs: {bench} replay {path.name} failed: {run.stderr.strip()}")
    return run.stdout.rstrip("\n")


def one_rank_verdict(root, analyze, bench, work):
    """docs/verdict.md: the verdict a job of one rank ends with, replayed from the archived one-rank.h5."""
    path = Source(RESULTS, "one-rank.h5").local(root, work)
    verdict = [line for line in replayed(bench, path).splitlines() if line.startswith("# verdict")]
    return (prose(f"the last line of `{command_of(analyze, path)}` ([{CONSOLE}/](../{CONSOLE}/README.md), re-made by "
                  "`build/mgpu_bench replay`):") + "\n\n```\n" + "\n".join(verdict) + "\n```")


def first_run(root, analyze, bench, work):
    """docs/verdict.md: the first run's console, as today's `mgpu_bench replay` prints it from the job's archived
    results file: revision, time stamp and hashes masked, of each configuration's runs the first two and the
    phase-marked ones."""
    with tarfile.open(root / RESULTS) as archive:
        name = next(n for n in archive.getnames() if re.fullmatch(r"mgpu_bench_\d{8}T\d{6}Z\.h5", n))
    path = Source(RESULTS, name).local(root, work)
    text = replayed(bench, path)
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
        kept.append(line)
    command = re.sub(r"mgpu_bench_\d{8}T\d{6}Z\.h5", "mgpu_bench_<UTC time>.h5", command_of(analyze, path))
    return (prose(f"`{command}` on the CPU fallback, as `bash launch/build-and-run.sh` runs it on a machine without "
                  f"GPUs; its console re-made from its results file by today's `build/mgpu_bench replay` "
                  f"([{CONSOLE}/](../{CONSOLE}/README.md)):") + "\n\n```\n" + "\n".join(kept) + "\n```")
