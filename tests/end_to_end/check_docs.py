#!/usr/bin/python3
"""Purpose: keeps the front door and the references true. Three checks, each exit 1 with one line per problem:
  readme ROOT              every repository path README.md and the docs name exists, and every --option a shell
                           command of README.md gives mgpu_bench, mgpu_analyze or a script is one their source defines;
  example ROOT FILE.h5     the h5py example of docs/results-format.md runs on FILE.h5 and prints one line per
                           configuration of the file;
  cli ROOT BIN_DIR         every option each program's --help lists has a row in its section of docs/cli.md, and
                           every row's option is one the help lists.
"""
import pathlib
import re
import subprocess
import sys

import h5py

# A shell command of the README: an indented block line, or inline code that starts with a program we ship or run.
PROGRAMS = ("bash ", "cmake ", "mpirun ", "build/", "ctest ", "python3 ", "sbatch ", "srun ", "launch/", "bench/")
PATH = re.compile(r"(?<![\w/.-])((?:launch|bench|tests|build|docs|hostfiles|analysis|src)/[\w./-]+)")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def readme_commands(readme: str):
    commands = [line.strip() for line in readme.splitlines()
                if line.startswith("    ") and line.strip().startswith(PROGRAMS)]
    commands += [code for code in re.findall(r"`([^`]+)`", readme.replace("\n", " ")) if code.startswith(PROGRAMS)]
    return commands


def known_options(root: pathlib.Path):
    """Every --option defined in the sources of the binaries and scripts a README command may call."""
    text = ""
    for pattern in ("src/cli/*.cpp", "analysis/*.cpp", "launch/**/*.sh", "launch/**/*.sbatch", "bench/*.sh",
                    "tests/*.sh"):
        for path in root.glob(pattern):
            text += path.read_text(errors="replace")
    defined = set(re.findall(r'"([a-z][a-z0-9-]*)[,"]', text))  # Boost.Program_options names: "model,m", "batch"
    defined |= {option[2:] for option in OPTION.findall(text)}
    # Options of the tools the commands run around ours.
    defined |= {"allow-run-as-root", "test-dir", "build", "output-on-failure", "timeout", "hostfile", "np"}
    return defined


# A repository path in a page's text: a top-level folder of ours, then a path (globs allowed: `src/results/results_*`).
PAGE_PATH = re.compile(
    r"(?<![\w/.-])((?:launch|bench|tests|docs|hostfiles|analysis|src|cmake|\.ci)/[\w.*/-]*(?:[\w*]|\{[\w,]+\}))")


def expand_braces(path: str):
    """`src/stats/verdict.{hpp,cpp}` -> both paths."""
    match = re.search(r"\{([\w,]+)\}", path)
    if match is None:
        return [path]
    return [path[:match.start()] + choice + path[match.end():] for choice in match.group(1).split(",")]


def check_page_paths(root: pathlib.Path):
    """Every repository path README.md and the docs name exists (relative to the root, or to the page's folder)."""
    problems = []
    pages = [root / "README.md", root / "bench" / "README.md", root / "analysis" / "README.md"]
    pages += sorted((root / "docs").glob("*.md"))
    for page in pages:
        for path in PAGE_PATH.findall(page.read_text()):
            path = path.rstrip(".")
            if path.startswith("build/") or re.search(r"[A-Z]{3,}", path):  # made by the build, or a placeholder
                continue
            for one in expand_braces(path):
                if not (list(root.glob(one)) or list(page.parent.glob(one))):
                    problems.append(f"{page.relative_to(root)} names {one}, which is not in the repository")
    return problems


def check_readme(root: pathlib.Path):
    problems = check_page_paths(root)
    readme = (root / "README.md").read_text()
    options = known_options(root)
    for command in readme_commands(readme):
        for path in PATH.findall(command):
            if path.startswith("build/") or path.rstrip(".,;:") == "build":
                continue  # made by the build
            if not (root / path.rstrip(".,;:)")).exists():
                problems.append(f"README.md: `{command}` names {path}, which is not in the repository")
        for option in OPTION.findall(command):
            if option[2:] not in options:
                problems.append(f"README.md: `{command}` passes {option}, which no program or script defines")
    return problems


def check_example(root: pathlib.Path, results: str):
    page = (root / "docs" / "results-format.md").read_text()
    block = re.search(r"### h5py.*?```python\n(.*?)```", page, re.S)
    if block is None:
        return ["docs/results-format.md: no h5py example found under '### h5py'"]
    code = block.group(1).replace('"results.h5"', repr(results))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if run.returncode != 0:
        return [f"docs/results-format.md: the h5py example failed on {results}: {run.stderr.strip().splitlines()[-1]}"]
    with h5py.File(results, "r") as f:
        expected = len(f["configurations"])
    lines = [line for line in run.stdout.splitlines() if "samples/s" in line]
    if len(lines) != expected:
        return [f"docs/results-format.md: the h5py example printed {len(lines)} lines for {expected} configurations"]
    print("\n".join(lines))
    return []


# docs/cli.md's sections and the help commands whose options each one documents.
CLI_SECTIONS = {"mgpu_bench": [["mgpu_bench", "--help"]],
                "mgpu_bench allreduce": [["mgpu_bench", "allreduce", "--help"]],
                "mgpu_bench probe": [["mgpu_bench", "probe", "--help"]],
                "mgpu_analyze": [["mgpu_analyze", "--help"], ["mgpu_analyze", "trace", "--help"]]}


def help_options(bin_dir: pathlib.Path, command):
    """The options a help text defines: the --name that opens an indented line (after a short form, if any)."""
    text = subprocess.run([str(bin_dir / command[0])] + command[1:], stdout=subprocess.PIPE, text=True).stdout
    return {m.group(1) for m in re.finditer(r"^\s+(?:-\w(?:, | \[ ))?(--[a-z][a-z0-9-]*)", text, re.M)}


def check_cli(root: pathlib.Path, bin_dir: pathlib.Path):
    sections = {part.split("\n", 1)[0].strip(): part
                for part in re.split(r"^## ", (root / "docs/cli.md").read_text(), flags=re.M)[1:]}
    problems = []
    for section, commands in CLI_SECTIONS.items():
        documented = {option for line in sections.get(section, "").splitlines() if line.startswith("| `-")
                      for option in OPTION.findall(line.split("|")[1])}
        helped = set().union(*(help_options(bin_dir, command) for command in commands))
        problems += [f"docs/cli.md, {section}: {o} is in --help but has no row" for o in sorted(helped - documented)]
        problems += [f"docs/cli.md, {section}: {o} has a row but --help does not list it"
                     for o in sorted(documented - helped)]
    return problems


def main(argv):
    arity = {"readme": 3, "example": 4, "cli": 4}
    if len(argv) < 2 or argv[1] not in arity or len(argv) != arity[argv[1]]:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[2])
    if argv[1] == "readme":
        problems = check_readme(root)
    elif argv[1] == "example":
        problems = check_example(root, argv[3])
    else:
        problems = check_cli(root, pathlib.Path(argv[3]))
    for problem in problems:
        print(problem)
    print(f"check_docs {argv[1]}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
