"""Purpose: the claims of the pages that the archive must bear out, for check_docs.py readme: each function returns
one line per problem.
  rates_above_peak        no TFLOP/s figure of README.md, docs/ or bench/results/ (prose or a TFLOP/s column) above
                          the peak of its precision, the highest the archive states ("peak ... fp32 51 TFLOP/s");
  run_counts_uncited      every "N runs" a section of README.md or docs/ states beside a file of bench/results/ it
                          cites is a run count that file (or its folder's summary) states;
  archive_pointers        every path bench/README.md and bench/results/*.md name (in backticks, or bench/results/...
                          in the prose) exists;
  gpu_targets_unmeasured  every numeric target of tests/gpu/README.md (≥, ≤, ±) is followed by its last measured
                          value and a link to the archived file that holds that value.
"""
import fnmatch
import functools
import os
import pathlib
import re

RATE = re.compile(r"(\d+(?:\.\d+)?)(?:\s*[–-]\s*(\d+(?:\.\d+)?))?\s*TFLOP/s")
PRECISIONS = ("fp32", "tf32", "bf16")
CLAUSE_END = re.compile(r"[.;:]\s|[(|]")
ROUNDING = 1.02  # a peak stated to two figures ("51") may sit 2% under the rate a table prints to one decimal


def clause_before(line: str, start: int) -> str:
    """The clause a figure sits in, up to the figure: from the last sentence, clause or cell boundary before it."""
    text = line[:start]
    ends = [m.end() for m in CLAUSE_END.finditer(text)]
    return text[ends[-1] if ends else 0:]


def precision_of(text: str) -> str:
    named = [(text.rfind(p), p) for p in PRECISIONS if p in text]
    return max(named)[1] if named else "fp32"


def is_separator(line: str) -> bool:
    """|---|---| under a Markdown table's header."""
    return line.startswith("|") and set(line.replace("|", "").strip()) <= set("-: ")


def stated_rates(text: str):
    """(rate, precision, is a peak, line) of every TFLOP/s figure in prose, and every cell of a TFLOP/s column."""
    lines = text.splitlines()
    columns = {}
    for n, line in enumerate(lines):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            columns = {}
        elif n + 1 < len(lines) and is_separator(lines[n + 1]):  # a table's header
            columns = {i: precision_of(c) for i, c in enumerate(cells) if "TFLOP/s" in c}
        elif columns and not is_separator(line):
            for i, precision in columns.items():
                number = re.match(r"\s*(\d+(?:\.\d+)?)", cells[i]) if i < len(cells) else None
                if number:
                    yield float(number.group(1)), precision, False, line
        for match in RATE.finditer(line):
            clause = clause_before(line, match.start())
            for value in filter(None, match.groups()):
                yield float(value), precision_of(clause), "peak" in clause.lower(), line


def rate_pages(root: pathlib.Path):
    return ([root / "README.md"] + sorted((root / "docs").glob("*.md")) +
            sorted((root / "bench" / "results").rglob("*.md")))


def rates_above_peak(root: pathlib.Path):
    peaks, rates = {}, []
    for page in rate_pages(root):
        for value, precision, is_peak, line in stated_rates(page.read_text()):
            if is_peak:
                peaks[precision] = max(peaks.get(precision, 0.0), value)
            else:
                rates.append((page, value, precision, line))
    problems = []
    for page, value, precision, line in rates:
        peak = peaks.get(precision)
        if peak is None:
            problems.append(f"{page.relative_to(root)}: states {value:g} TFLOP/s ({precision}), and no page of the "
                            f"archive states a {precision} peak to hold it to")
        elif value > peak * ROUNDING:
            problems.append(f"{page.relative_to(root)}: states {value:g} TFLOP/s, above the {precision} peak "
                            f"{peak:g} TFLOP/s: '{line.strip()[:120]}'")
    return problems


# A run count a page states: "10 runs", "5 kept runs"; not a rule's threshold ("fewer than 5 kept runs").
STATED_RUNS = re.compile(r"(?<!fewer than )(?<!at least )(?<!below )(?<!under )(?<!than )\b(\d+) "
                         r"(?:(?:kept|throughput|measured|unmarked) )?runs\b")
CITED = re.compile(r"\]\(([^)#\s]+)[^)]*\)|\b(bench/results/[\w./-]*\w/?)")


def recorded_runs(text: str, count: int) -> bool:
    return re.search(rf"\bRUNS={count}\b|--runs {count}\b|\b{count} (?:\w+ )?runs\b|\bruns(?: kept)?[ =:]+{count}\b",
                     text) is not None


def cited_archive(root: pathlib.Path, page: pathlib.Path, section: str):
    """The archive files a section cites (a folder stands for its summary), each with its folder's summary."""
    found = []
    for linked, named in CITED.findall(section):
        for base in ((page.parent,) if linked else (root,)):
            path = (base / (linked or named)).resolve()
            archive = (root / "bench" / "results").resolve()
            if archive not in path.parents or not path.exists():
                continue
            folder = path if path.is_dir() else path.parent
            found += [p for p in (path, folder / "summary.md", folder / "README.md") if p.is_file()]
    return found


def run_counts_uncited(root: pathlib.Path, prose):
    """prose(text): a page's statements (check_docs.prose_outside_generated: no generated blocks, no code)."""
    problems = []
    for page in [root / "README.md"] + sorted((root / "docs").glob("*.md")):
        for section in re.split(r"^#+ ", page.read_text(), flags=re.M):
            cited = cited_archive(root, page, section)
            if not cited:
                continue
            texts = [path.read_text(errors="replace") for path in cited]
            for count in sorted({int(n) for n in STATED_RUNS.findall(prose(section))}):
                if not any(recorded_runs(text, count) for text in texts):
                    heading = section.splitlines()[0]
                    names = ", ".join(sorted({str(p.relative_to(root.resolve())) for p in cited}))
                    problems.append(f"{page.relative_to(root)}, \"{heading}\": states {count} runs, which no file it "
                                    f"cites records ({names})")
    return problems


POINTER = re.compile(r"`([^`\s]+)`")
FILE_NAME = re.compile(r"\.(?:h5|md|txt|tar\.gz|csv|json|sh|py|ini|svg|png|log|cpp|hpp|cu|env|sbatch)$")
ARCHIVE_PROSE = re.compile(r"(?<![\w/.`-])(bench/results/[\w./-]*\w/?)")


def is_pointer(token: str) -> bool:
    """A path or file name, not a placeholder (DIR, <model>, $OUT, *), an HDF5 path (/probe) or an option."""
    if not ("/" in token or FILE_NAME.search(token)) or token.startswith(("/", "-", "~")):
        return False
    return not re.search(r"[$<>=]|[A-Z]{3,}", token)


@functools.lru_cache(maxsize=None)
def file_names(root: pathlib.Path):
    """The name of every file of the tree, build folders and hidden ones left out."""
    names = set()
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if not f.startswith(("build", "."))]
        names.update(files)
    return names


def pointer_exists(root: pathlib.Path, page: pathlib.Path, token: str) -> bool:
    bases = [page.parent, root, root / "bench", root / "bench" / "results"]
    if any(list(base.glob(token.rstrip("/"))) for base in bases):
        return True
    if "/" in token:
        return False
    return any(fnmatch.fnmatch(name, token) for name in file_names(root))  # a file named by itself: anywhere


def archive_pointers(root: pathlib.Path):
    problems = []
    for page in [root / "bench" / "README.md"] + sorted((root / "bench" / "results").glob("*.md")):
        text = page.read_text()
        tokens = POINTER.findall(text) + ARCHIVE_PROSE.findall(text)
        for token in sorted({t for t in tokens if is_pointer(t)}):
            if not pointer_exists(root, page, token):
                problems.append(f"{page.relative_to(root)} names {token}, which is not in the repository")
    return problems


TARGET = re.compile(r"(?:≥|≤|±) ?\d[\d.]*%?")
LAST_MEASURED = re.compile(r"last measured:? ([^\[\]]*?)\s*\(?\[[^\]]*\]\(([^)#\s]+)")


def gpu_targets_unmeasured(root: pathlib.Path):
    page = root / "tests" / "gpu" / "README.md"
    text = re.sub(r"\s+", " ", page.read_text())
    targets = list(TARGET.finditer(text))
    problems = []
    for i, target in enumerate(targets):
        following = text[target.end():targets[i + 1].start() if i + 1 < len(targets) else len(text)]
        measured = LAST_MEASURED.search(following)
        if measured is None:
            problems.append(f"{page.relative_to(root)}: the target '{target.group(0)}' shows no last measured value "
                            "with a link to the archived file that holds it")
            continue
        cited = page.parent / measured.group(2)
        values = re.findall(r"[+-]?\d[\d.]*%?", measured.group(1))
        if not cited.is_file():
            problems.append(f"{page.relative_to(root)}: the target '{target.group(0)}' cites {measured.group(2)}, "
                            "which is not in the repository")
        elif not values or any(v not in cited.read_text() for v in values):
            problems.append(f"{page.relative_to(root)}: the target '{target.group(0)}' was last measured "
                            f"'{measured.group(1)}', which {measured.group(2)} does not state")
    return problems


def problems(root: pathlib.Path, prose):
    return (rates_above_peak(root) + run_counts_uncited(root, prose) + archive_pointers(root) +
            gpu_targets_unmeasured(root))
