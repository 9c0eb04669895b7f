#!/usr/bin/env python3
"""Purpose: a mutation sample of the CPU-reachable code of src/ and analysis/ (the sources CMake compiles only with
CUDA, GPU-only headers and `#if MGPU_HAVE_CUDA` parts left out): single-operator changes at sites drawn
at random with a fixed seed, each rebuilt and tested in an existing build (the sanitized one: an off-by-one read is
then an error); prints every mutant and the kill rate. A mutant that does not compile (a '+' between strings turned
into '-') is not counted: the next site of the draw takes its place. Not run by CI (docs/testing.md).

Usage: BUILD_DIR=build-sanitize python3 tests/mutation/mutation_sample.py [--count 40] [--seed 2026] [--list]
           [--base REV]   (only the files a change touched since REV: git diff REV HEAD, moved files by their new
                          names; --changed-since REV says the same)
           [--skip N]     (goes on with a stopped sample of the same seed: the draw's first N sites were tested)
"""
import argparse
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Each operator and its one replacement. Spaces on both sides: clang-format writes binary operators that way, which
# keeps template brackets (std::vector<int>), stream operators (<<) and unary minus out of the sample.
SWAPS = {" < ": " <= ", " <= ": " < ", " > ": " >= ", " >= ": " > ", " == ": " != ", " != ": " == ",
         " + ": " - ", " - ": " + ", " && ": " || ", " || ": " && "}
OPERATOR = re.compile("|".join(re.escape(op) for op in sorted(SWAPS, key=len, reverse=True)))

# Code the CPU build does not compile or cannot run (the GPU paths), by name, for headers and files the CMake lists
# below do not name; docs/testing.md names them.
GPU_ONLY = re.compile(r"cuda|nccl|nvml|gpu_devices|hardware_probe|graph_timing|per_device_once|tuned_gemm|"
                      r"reduction_workspace")

# The test folders that exercise a source folder: its own, and those of the layers built on it that test it directly.
TEST_FOLDERS = {"platform": ["platform", "model"], "model": ["model", "train"], "comm": ["comm"],
                "config": ["config", "results", "cli", "stats", "predict", "analysis"],
                "results": ["results", "stats", "predict", "analysis"], "stats": ["stats", "analysis"],
                "predict": ["predict", "analysis"],
                "train": ["train"], "cli": ["cli", "end_to_end"], "study": ["study", "end_to_end"],
                "probes": ["probes"],
                "analysis": ["analysis"]}


def cuda_only_files():
    """The sources src/'s CMakeLists.txt compile only with CUDA (inside `if(MGPU_HAVE_CUDA)`); a header is compiled
    wherever it is included, so headers are left to GPU_ONLY."""
    found = set()
    for cmake in (ROOT / "src").rglob("CMakeLists.txt"):
        for block in re.findall(r"if\(MGPU_HAVE_CUDA\)(.*?)endif\(\)", cmake.read_text(), re.S):
            found.update(cmake.parent / name for name in re.findall(r"[\w/]+\.cpp", block))
    return found


def source_files(changed_since=None):
    """The sampled files; with `changed_since` (a git revision), only those changed between it and HEAD."""
    files = list((ROOT / "src").rglob("*.cpp")) + list((ROOT / "src").rglob("*.hpp")) + \
        list((ROOT / "analysis").glob("*.cpp")) + list((ROOT / "analysis").glob("*.hpp"))
    if changed_since:
        changed = subprocess.run(["git", "diff", "--name-only", changed_since, "HEAD"], cwd=ROOT, check=True,
                                 stdout=subprocess.PIPE, text=True).stdout.split()
        files = [f for f in files if str(f.relative_to(ROOT)) in changed]
    cuda_only = cuda_only_files()
    return sorted(f for f in files if f not in cuda_only and not GPU_ONLY.search(f.name) and f.name != "main.cpp")


def code_part(line):
    """The line without its comment and with string literals blanked, or '' for preprocessor lines."""
    if line.lstrip().startswith("#"):
        return ""
    line = re.sub(r'"(\\.|[^"\\])*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', line)
    line = re.sub(r"'(\\.|[^'\\])'", "' '", line)
    cut = line.find("//")
    return line if cut < 0 else line[:cut]


def cpu_build_lines(lines):
    """Whether each line is compiled without CUDA: False inside `#if MGPU_HAVE_CUDA` (up to its #else or #endif)."""
    compiled, branches = [], []  # branches: per open #if, True while in the CUDA-only part of an MGPU_HAVE_CUDA test
    for line in lines:
        directive = line.strip()
        if directive.startswith("#if"):
            branches.append(bool(re.match(r"#if\s+MGPU_HAVE_CUDA\b", directive)))
        elif directive.startswith("#else") and branches:
            branches[-1] = False
        elif directive.startswith("#endif") and branches:
            branches.pop()
        compiled.append(not any(branches))
    return compiled


def sites(changed_since=None):
    found = []
    for path in source_files(changed_since):
        lines = path.read_text().splitlines()
        for number, (line, compiled) in enumerate(zip(lines, cpu_build_lines(lines)), 1):
            if not compiled:
                continue
            for match in OPERATOR.finditer(code_part(line)):
                found.append((path, number, match.start(), match.group(0)))
    return found


def folder_of(path):
    relative = path.relative_to(ROOT).parts
    return "analysis" if relative[0] == "analysis" else relative[1]


# A test that is an executable of its own (a build target) and one that add_test runs on the binaries or a script.
EXECUTABLE_TEST = re.compile(r"^\s*mgpu_(?:unit|mpi|analysis)_test\((\w+)\)", re.M)
COMMAND_TEST = re.compile(r"add_test\(NAME (\w+)")


def tests_in(folder):
    """Every test the folder's CMakeLists.txt registers, as (executables, all): the unit tests, then the add_test ones
    (the binaries on real files, the browser's check of the report page)."""
    text = (ROOT / "tests" / folder / "CMakeLists.txt").read_text()
    executables = EXECUTABLE_TEST.findall(text)
    return executables, executables + COMMAND_TEST.findall(text)


def run(command, timeout):
    try:
        return subprocess.run(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return 124


def affected(path, registered):
    """The tests of the folders that exercise `path`, and the targets to rebuild for them: their executables and the
    two binaries (add_test tests run mgpu_bench and mgpu_analyze)."""
    folders = [tests_in(f) for f in TEST_FOLDERS[folder_of(path)]]
    tests = [t for _, every in folders for t in every if t in registered]
    targets = [t for executables, _ in folders for t in executables if t in registered] + ["mgpu_bench", "mgpu_analyze"]
    return tests, targets


def test_mutant(path, mutated, build, registered):
    """Writes the text `mutated` in place of `path`, rebuilds what its tests need in `build` and runs them; restores
    the file whatever happens. Returns "killed", "SURVIVED" or "stillborn" (does not compile)."""
    tests, targets = affected(path, registered)
    original = path.read_text()
    try:
        path.write_text(mutated)
        if run(["cmake", "--build", str(build), "-j", str(os.cpu_count()), "--target", *targets], 1800) != 0:
            return "stillborn"
        status = run(["ctest", "--test-dir", str(build), "-R", "^(" + "|".join(tests) + ")$", "--timeout", "300",
                      "-j", str(os.cpu_count())], 1800)
        return "killed" if status != 0 else "SURVIVED"
    finally:
        path.write_text(original)


def registered_tests(build):
    listed = subprocess.run(["ctest", "--test-dir", str(build), "-N"], stdout=subprocess.PIPE, text=True).stdout
    return set(re.findall(r"Test\s+#\d+: (\S+)", listed))


def run_sample(mutants, count, build, registered):
    """Tests `mutants` (path, mutated text, where, the changed line) in turn until `count` of them compiled; prints
    each, then the kill rate and the survivors, and puts the build back in step with the restored sources."""
    killed = tested = stillborn = 0
    survivors = []
    for path, mutated, where, changed in mutants:
        if tested == count:
            break
        start = time.time()
        outcome = test_mutant(path, mutated, build, registered)
        if outcome == "stillborn":
            stillborn += 1
            print(f"[--] does not compile: {where}", flush=True)
            continue
        tested += 1
        killed += outcome == "killed"
        if outcome == "SURVIVED":
            survivors.append(f"{where}  | {changed}")
        print(f"[{tested:2}] {outcome:8} {time.time() - start:5.0f} s  {where}\n      {changed}", flush=True)
    run(["cmake", "--build", str(build), "-j", str(os.cpu_count())], 3600)
    print(f"killed {killed} of {tested} ({100.0 * killed / max(1, tested):.0f}%); {stillborn} did not compile")
    for where in survivors:
        print(f"  survived: {where}")
    return 0


def operator_mutant(path, number, column, operator):
    lines = path.read_text().splitlines(keepends=True)
    line = lines[number - 1]
    lines[number - 1] = line[:column] + SWAPS[operator] + line[column + len(operator):]
    where = f"{path.relative_to(ROOT)}:{number}: '{operator.strip()}' -> '{SWAPS[operator].strip()}'"
    return path, "".join(lines), where, lines[number - 1].strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=40)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--list", action="store_true", help="print the sample without running it")
    parser.add_argument("--skip", type=int, default=0, metavar="N",
                        help="leave out the draw's first N sites (a stopped sample of the same seed tested them)")
    parser.add_argument("--base", "--changed-since", dest="base", metavar="REV",
                        help="sample only the files changed between REV and HEAD")
    args = parser.parse_args()
    build = Path(os.environ.get("BUILD_DIR", ROOT / "build-sanitize")).resolve()
    registered = registered_tests(build)
    everything = sites(args.base)
    draw = everything[:]
    random.Random(args.seed).shuffle(draw)
    print(f"{len(everything)} sites in {len(source_files(args.base))} files; "
          f"drawing {args.count} with seed {args.seed}")
    mutants = (operator_mutant(*site) for site in draw[args.skip:])
    if args.list:
        for index, (path, _, where, changed) in zip(range(1, args.count + 1), mutants):
            print(f"[{index:2}] {where}  ({', '.join(affected(path, registered)[0])})\n      {changed}")
        return 0
    return run_sample(mutants, args.count, build, registered)


if __name__ == "__main__":
    sys.exit(main())
