#!/usr/bin/python3
"""Purpose: keeps the front door and the references true. Two checks, each exit 1 with one line per problem:
  readme ROOT              every repository path README.md and the docs name exists, every relative link to a page
                           and its section resolves (README.md, docs/, bench/README.md, analysis/README.md,
                           tests/gpu/README.md and every page of bench/results/), every section a page cites by name
                           ('statistics.md, "Trials"') exists, and every test the docs name (a CTest, a GoogleTest
                           Suite.Name) is defined; every --option a shell command of README.md gives mgpu_bench,
                           mgpu_analyze or a script is one their source defines; no measured figure outside a
                           generated block (an interval, a break-even batch anywhere; in README.md also a speedup,
                           a time or a decimal figure), and every generated block one bench/generate_docs.py fills;
                           outside generated blocks README.md within README_LINES lines, each page of docs/ within
                           PAGE_LINES, all of them within TOTAL_WORDS words, and no commit hash or date of a run
                           (a generated block states its source's); README.md's first FIRST_SCREEN lines open
                           the measured answer and hold its plot; bench/results/ within ARCHIVE_BYTES; and what
                           check_claims.py holds to the archive (no rate above its peak, run counts, pointers, the
                           GPU targets' last values);
  example ROOT FILE.h5     the h5py example of docs/results-format.md runs on FILE.h5 and prints one line per
                           configuration of the file.
(Whether every generated block and the README's plot are what the archive gives now is bench/generate_docs.py --check,
CTest docs_figures_are_generated: it needs the binaries.)
"""
import functools
import importlib.util
import pathlib
import re
import subprocess
import sys

import h5py

import check_claims  # tests/end_to_end/: what the archive must bear out (rates, run counts, pointers, targets)

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
    defined |= {"allow-run-as-root", "test-dir", "build", "output-on-failure", "timeout", "hostfile", "np", "install",
                "prefix"}
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
FIRST_SCREEN = 40  # README.md's lines that must hold the answer's block and its plot
ANSWER_PLOT = "docs/figures/speedup_vs_batch.svg"
PAGE_LINES = 250  # a reference page read once, whole
TOTAL_WORDS = 25000  # README.md and docs/ together, outside their generated blocks
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


def link_problems(root: pathlib.Path, page: pathlib.Path):
    """Every relative link of a page resolves, and its section where it names one."""
    problems = []
    for target, section in LINK.findall(page.read_text()):
        if target.startswith(("http:", "https:")):
            continue
        path = (page.parent / target) if target else page
        if not path.exists():
            problems.append(f"{page.relative_to(root)}: links to {target}, which is not in the repository")
        elif section and path.suffix == ".md" and section not in anchors(path):
            problems.append(f"{page.relative_to(root)}: links to {target}#{section}, a section {path.name} lacks")
    return problems


def check_pages(root: pathlib.Path):
    """Lengths, the word budget, relative links with their sections (also of the archive's and folders' pages), and
    no run's date or hash outside links."""
    problems = []
    pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
    words = 0
    for page in [root / "bench" / "README.md", root / "analysis" / "README.md", root / "tests" / "gpu" / "README.md"]:
        problems += link_problems(root, page)
    for page in sorted((root / "bench" / "results").rglob("*.md")):
        problems += link_problems(root, page)
    for page in pages:
        text = page.read_text()
        # The budgets are the prose's: generated blocks (tables, --help, outputs, the provenance of measured figures:
        # a run's date and revision) are bounded by their generator.
        prose = GENERATED.sub("", text)
        lines = prose.count("\n")
        limit = README_LINES if page.name == "README.md" and page.parent == root else PAGE_LINES
        if lines > limit:
            problems.append(f"{page.relative_to(root)}: {lines} lines outside generated blocks, over {limit}")
        words += len(prose.split())
        problems += link_problems(root, page)
        for trace in RUN_TRACE.findall(LINK.sub("", prose)):
            problems.append(f"{page.relative_to(root)}: names '{trace}' (a run's date or revision belongs in "
                            "bench/results/README.md)")
    problems += first_screen_problems(root)
    if words > TOTAL_WORDS:
        problems.append(f"README.md and docs/: {words} words, over {TOTAL_WORDS}")
    archive = sum(path.stat().st_size for path in (root / "bench" / "results").rglob("*") if path.is_file())
    if archive > ARCHIVE_BYTES:
        problems.append(f"bench/results/: {archive:,} bytes, over {ARCHIVE_BYTES:,}")
    return problems


def first_screen_problems(root: pathlib.Path):
    """README.md's first screen opens the measured answer and shows its plot where one is drawn."""
    lines = (root / "README.md").read_text().splitlines()
    first = "\n".join(lines[:FIRST_SCREEN])
    problems = []
    if "<!-- generated: grid-answer -->" not in first:
        problems.append(f"README.md: the measured answer (block grid-answer) does not open in the first {FIRST_SCREEN} "
                        "lines")
    if any(ANSWER_PLOT in line for line in lines) and ANSWER_PLOT not in first:
        problems.append(f"README.md: the answer's plot ({ANSWER_PLOT}) is not in the first {FIRST_SCREEN} lines")
    return problems


def reference_pages(root: pathlib.Path):
    return ([root / "README.md", root / "bench" / "README.md", root / "analysis" / "README.md",
             root / "tests" / "gpu" / "README.md"] + sorted((root / "docs").glob("*.md")))


# A section cited by name after its page: `[statistics.md](statistics.md), "Trials"` or `docs/statistics.md, "The
# ceiling"`; the name must begin a heading of that page.
CITED_SECTION = re.compile(r"(?:\]\(([\w./-]+\.md)\)|([\w./-]+\.md)`?),? \"([^\"]+)\"")


def check_cited_sections(root: pathlib.Path):
    problems = []
    for page in reference_pages(root):
        for linked, named, section in CITED_SECTION.findall(page.read_text().replace("\n", " ")):
            target = linked or named
            candidates = [page.parent / target, root / target, root / "docs" / pathlib.Path(target).name]
            path = next((c for c in candidates if c.is_file()), None)
            if path is None:
                continue  # a missing page is the path check's
            headings = [h.strip().lower() for h in re.findall(r"^#+ (.*)$", path.read_text(), re.M)]
            if not any(h.replace("`", "").startswith(section.lower()) for h in headings):
                problems.append(f"{page.relative_to(root)} cites section \"{section}\" of {target}, which it lacks")
    return problems


@functools.lru_cache(maxsize=None)
def defined_tests(root: pathlib.Path):
    """The CTest names the CMake files define, and the GoogleTest Suite.Name of every test source."""
    ctest, gtest = set(), set()
    for cmake in list(root.glob("tests/**/CMakeLists.txt")) + [root / "CMakeLists.txt"]:
        text = cmake.read_text()
        ctest |= set(re.findall(r"add_test\(\s*NAME\s+([\w-]+)", text))
        ctest |= set(re.findall(r"^\s*mgpu_\w*test\((\w+)", text, re.M))
    for source in list(root.glob("tests/**/*.cpp")) + list(root.glob("tests/**/*.cu")):
        gtest |= {f"{suite}.{name}" for suite, name in
                  re.findall(r"^\s*TEST(?:_F|_P)?\(\s*(\w+),\s*(\w+)\)", source.read_text(), re.M)}
    return ctest, gtest


def check_test_names(root: pathlib.Path):
    """Every test the docs name is defined: `test_*` and "CTest `name`" anywhere, `(`name`)` in docs/testing.md (its
    list of the suite's checks), and `Suite.Name` GoogleTest names (a trailing * matches a prefix)."""
    ctest, gtest = defined_tests(root)
    problems = []
    for page in reference_pages(root):
        text = page.read_text().replace("\n", " ")
        named = set(re.findall(r"`(test_\w+)`", text)) | set(re.findall(r"CTest `([\w-]+)`", text))
        if page.name == "testing.md":
            named |= set(re.findall(r"\(`([a-z][\w-]*)`\)", text))
        for name in sorted(named - ctest):
            problems.append(f"{page.relative_to(root)} names the test {name}, which no CMakeLists.txt defines")
        for suite, name in re.findall(r"`([A-Z]\w*)\.([A-Z][\w*]*)`", text):
            prefix = f"{suite}.{name}".rstrip("*")
            if not any(t == prefix or (name.endswith("*") and t.startswith(prefix)) for t in gtest):
                problems.append(f"{page.relative_to(root)} names the test {suite}.{name}, which no test source defines")
    return problems


GENERATED = re.compile(r"<!-- generated: (\S+) -->\n.*?<!-- generated: end -->", re.S)
# The answer's figures: a value with its interval or an interval, a break-even batch ("~1,654"); in README.md, the
# front door, also a speedup, a time and any decimal figure.
ANSWER_FIGURES = [re.compile(r"\[\d+(?:\.\d+)?%?, \d+(?:\.\d+)?%?\]"), re.compile(r"~\d[\d,.]*")]
README_FIGURES = [re.compile(r"speedups? (?:of |is |was )?\d\.\d+"), re.compile(r"\b\d+(?:\.\d+)? ?(?:µs|ms)\b"),
                  re.compile(r"\b\d\.\d{2,}\b")]


def prose_outside_generated(text: str):
    """A page's prose outside its generated blocks: code (fenced, indented, inline) is output or commands, not a
    statement."""
    text = GENERATED.sub("", text)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.startswith("    "))
    return re.sub(r"`[^`]*`", "", text, flags=re.S)


def check_measured_figures(root: pathlib.Path):
    """No page states a measured figure that bench/generate_docs.py does not draw from the archive."""
    problems = []
    for page in [root / "README.md"] + sorted((root / "docs").glob("*.md")):
        text = prose_outside_generated(page.read_text())
        patterns = ANSWER_FIGURES + (README_FIGURES if page.name == "README.md" and page.parent == root else [])
        for pattern in patterns:
            for figure in pattern.findall(text):
                problems.append(f"{page.relative_to(root)}: states '{figure}' outside a generated block (measured "
                                "figures come from bench/generate_docs.py)")
    return problems


def check_generated_blocks(root: pathlib.Path):
    """Every generated block of README.md and docs/ is one bench/generate_docs.py fills, and every one it fills is
    there (what they hold is its --check)."""
    spec = importlib.util.spec_from_file_location("generate_docs", root / "bench" / "generate_docs.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    problems = []
    for page in [root / "README.md"] + sorted((root / "docs").glob("*.md")):
        page_name = str(page.relative_to(root))
        known = set(generator.BLOCKS.get(page_name, {}))
        found = set(re.findall(r"<!-- generated: (\S+) -->", page.read_text())) - {"end"}
        for name in sorted(found - known):
            problems.append(f"{page_name}: a generated block '{name}' that bench/generate_docs.py does not fill")
        for name in sorted(known - found):
            problems.append(f"{page_name}: no block '{name}', which bench/generate_docs.py fills")
    return problems


def check_readme(root: pathlib.Path):
    problems = check_page_paths(root) + check_pages(root) + check_cited_sections(root) + check_test_names(root)
    problems += check_measured_figures(root) + check_generated_blocks(root)
    problems += check_claims.problems(root, prose_outside_generated)
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
