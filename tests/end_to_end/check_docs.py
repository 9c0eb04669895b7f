#!/usr/bin/python3
"""Purpose: keeps the front door and the references true. Two checks, each exit 1 with one line per problem:
  readme ROOT              every repository path README.md and the docs name exists, every relative link to a page
                           and its section resolves, and every --option a shell command of README.md gives
                           mgpu_bench, mgpu_analyze or a script is one their source defines; README.md within
                           README_LINES lines, each page of docs/ within PAGE_LINES, all of them together within
                           TOTAL_WORDS words, no commit hash or date of a run, and bench/results/ within ARCHIVE_BYTES;
  example ROOT FILE.h5     the h5py example of docs/results-format.md runs on FILE.h5 and prints one line per
                           configuration of the file.
(The --help blocks of docs/cli*.md and every measured figure are checked by bench/generate_docs.py --check.)
"""
import functools
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


README_LINES = 160  # the front door: its first screen holds the measured answer
PAGE_LINES = 250  # a reference page read once, whole
TOTAL_WORDS = 25000  # README.md and docs/ together
ARCHIVE_BYTES = 5_000_000  # bench/results/: what the docs cite, not every run ever made (git keeps those)
# A run's trace: a commit hash after "git", or a date (the archive's folders that pages cite are named without one).
RUN_TRACE = re.compile(r"\bgit [0-9a-f]{7,}\b|\b20\d\d-[01]\d-[0-3]\d\b")
LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)")


@functools.lru_cache(maxsize=None)
def anchors(page: pathlib.Path):
    """GitHub's anchors of a page's headings."""
    text = page.read_text()
    found = {re.sub(r"[^\w\- ]", "", heading.lower().replace("`", "")).replace(" ", "-")
             for heading in re.findall(r"^#+ (.*)$", text, re.M)}
    return found | set(re.findall(r'<a id="([^"]+)"', text))


def check_pages(root: pathlib.Path):
    """Lengths, the word budget, relative links with their sections, and no run's date or hash outside links."""
    problems = []
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    words = 0
    for page in pages:
        text = page.read_text()
        lines = text.count("\n")
        limit = README_LINES if page.name == "README.md" and page.parent == root else PAGE_LINES
        if lines > limit:
            problems.append(f"{page.relative_to(root)}: {lines} lines, over {limit}")
        words += len(text.split())
        for target, section in LINK.findall(text):
            if target.startswith(("http:", "https:")):
                continue
            path = (page.parent / target) if target else page
            if not path.exists():
                problems.append(f"{page.relative_to(root)}: links to {target}, which is not in the repository")
            elif section and path.suffix == ".md" and section not in anchors(path):
                problems.append(f"{page.relative_to(root)}: links to {target}#{section}, a section {path.name} lacks")
        for trace in RUN_TRACE.findall(LINK.sub("", text)):
            problems.append(f"{page.relative_to(root)}: names '{trace}' (a run's date or revision belongs in "
                            "bench/results/README.md)")
    if words > TOTAL_WORDS:
        problems.append(f"README.md and docs/: {words} words, over {TOTAL_WORDS}")
    archive = sum(path.stat().st_size for path in (root / "bench" / "results").rglob("*") if path.is_file())
    if archive > ARCHIVE_BYTES:
        problems.append(f"bench/results/: {archive:,} bytes, over {ARCHIVE_BYTES:,}")
    return problems


def check_readme(root: pathlib.Path):
    problems = check_page_paths(root) + check_pages(root)
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


def main(argv):
    arity = {"readme": 3, "example": 4}
    if len(argv) < 2 or argv[1] not in arity or len(argv) != arity[argv[1]]:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[2])
    if argv[1] == "readme":
        problems = check_readme(root)
    else:
        problems = check_example(root, argv[3])
    for problem in problems:
        print(problem)
    print(f"check_docs {argv[1]}: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
