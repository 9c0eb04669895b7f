#!/usr/bin/env python3
"""Purpose: the measured figures of README.md and docs/study.md, generated from the verdicts mgpu_bench printed for
the archived runs (bench/results/h200x2-2026-11-28c/*_verdict.txt, the lines of compute_answer): each generated block
sits between `<!-- generated: NAME -->` and `<!-- generated: end -->` and is rewritten whole. --check rewrites
nothing and exits 1 naming every block that differs from what the archive gives (CTest docs_figures_are_generated).

Usage: python3 bench/generate_docs.py [--check] [ROOT]
"""
import pathlib
import re
import sys

ARCHIVE = "bench/results/h200x2-2026-11-28c"
NVLINK = f"{ARCHIVE}/user_command_verdict.txt"  # mpirun -np 2 mgpu_bench --model large,medium --batch 32,128
PCIE = f"{ARCHIVE}/study_pcie_trials3_verdict.txt"  # the study grid, pcie-host-bridge preset, 3 trials
PARAMETERS = {"medium": "258,432", "large": "6,885,376"}  # the presets' parameter counts (docs/measurement.md)

PAIR = re.compile(r"^#\s+(\w+), global batch (\d+), (\d+) GPUs(?:, \d+ trials)?: speedup ([\d.]+) \[([\d.]+), ([\d.]+)\]")
BREAK_EVEN = re.compile(r"^#\s+break-even, (\w+) on (\d+) GPUs[^:]*: (.*)$")


def read_verdict(root, path):
    """{model: {batch: (speedup, low, high)}} and {model: break-even sentence} of one verdict file."""
    pairs, break_evens = {}, {}
    for line in (root / path).read_text().splitlines():
        if (m := PAIR.match(line)):
            pairs.setdefault(m[1], {})[int(m[2])] = tuple(float(m[g]) for g in (4, 5, 6))
        elif (m := BREAK_EVEN.match(line)):
            break_evens[m[1]] = m[3]
    return pairs, break_evens


def interval(speedup):
    return f"{speedup[0]:.3f} [{speedup[1]:.3f}, {speedup[2]:.3f}]"


def pays(sentence):
    """Where two GPUs start to pay, from the break-even sentence."""
    if (m := re.match(r"break-even at global batch (~\d+)", sentence)):
        return f"from global batch {m[1]}"
    if (m := re.match(r"never in the measured range \(largest batch (\d+)", sentence)):
        return f"not up to {m[1]}"
    return sentence


def nvlink_table(root):
    pairs, break_evens = read_verdict(root, NVLINK)
    batches = sorted({b for model in pairs.values() for b in model})
    rows = ["| model | " + " | ".join(f"global batch {b}" for b in batches) + " | two GPUs pay |",
            "|---" * (len(batches) + 2) + "|"]
    for model in ("medium", "large"):
        cells = [interval(pairs[model][b]) for b in batches]
        rows.append(f"| {model} ({PARAMETERS[model]} parameters) | " + " | ".join(cells) +
                    f" | {pays(break_evens[model])} |")
    return "\n".join(rows)


def pcie_range(root):
    pairs, _ = read_verdict(root, PCIE)
    spans = []
    for model in ("medium", "large"):
        values = [s[0] for s in pairs[model].values()]
        spans.append(f"{model} {min(values):.3f} to {max(values):.3f}")
    return ("With the study's PCIe host-bridge preset (gradients through host memory), two GPUs are slower at every "
            "point of\nthe study's grid, " + " and ".join(spans) + "\n([docs/study.md](docs/study.md)): the study's "
            "conclusion holds for its interconnect, and the parameter count is not what\ndecides.")


def pcie_tables(root):
    pairs, _ = read_verdict(root, PCIE)
    tables = []
    for model in ("medium", "large"):
        batches = sorted(pairs[model])
        tables.append("\n".join([f"| {model} | " + " | ".join(str(b) for b in batches) + " |",
                                 "|---" * (len(batches) + 1) + "|",
                                 "| speedup, 2 GPUs | " + " | ".join(interval(pairs[model][b]) for b in batches) +
                                 " |"]))
    return "\n\n".join(tables)


# Each page's generated blocks: name -> text.
BLOCKS = {"README.md": {"nvlink-answer": nvlink_table, "pcie-range": pcie_range},
          "docs/study.md": {"pcie-grid": pcie_tables, "nvlink-answer": nvlink_table}}
BLOCK = re.compile(r"(<!-- generated: (\S+) -->\n)(.*?)(\n<!-- generated: end -->)", re.S)


def main(argv):
    check = "--check" in argv
    rest = [a for a in argv[1:] if a != "--check"]
    root = pathlib.Path(rest[0] if rest else pathlib.Path(__file__).resolve().parents[1])
    stale = []
    for page, blocks in BLOCKS.items():
        path = root / page
        text = path.read_text()
        found = set()

        def fill(m):
            found.add(m[2])
            return m[1] + blocks[m[2]](root) + m[4]

        new = BLOCK.sub(fill, text)
        stale += [f"{page}: no block '{name}'" for name in blocks if name not in found]
        if new != text:
            stale.append(f"{page}: a generated block differs from {ARCHIVE} (run python3 bench/generate_docs.py)")
            if not check:
                path.write_text(new)
    for problem in stale:
        print(problem)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
