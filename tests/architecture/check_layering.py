#!/usr/bin/env python3
"""Checks that src/ keeps its layering (docs/architecture.md): every #include of a project header names a folder at
the includer's layer or below it, and the analyzer includes nothing above src/predict. Exits 1 listing each violation."""
import pathlib
import re
import sys

# Bottom to top; a file may include its own layer and any layer listed before it.
LAYERS = ["platform", "model", "config", "kernels", "comm", "results", "stats", "predict", "train", "cli", "study",
          "probes"]
# model: `predict` names the MLP it predicts by preset or widths (src/model/mlp_spec.hpp); predict: its cost models.
ANALYSIS_MAY_INCLUDE = {"platform", "model", "config", "results", "stats", "predict"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)


def violations(root: pathlib.Path):
    for path in sorted((root / "src").rglob("*")):
        if path.suffix not in {".hpp", ".cpp", ".cu", ".cuh"}:
            continue
        relative = path.relative_to(root / "src")
        layer = relative.parts[0] if len(relative.parts) > 1 else None  # None: src/main.cpp, the top
        for included in INCLUDE.findall(path.read_text()):
            if included not in LAYERS:
                yield f"src/{relative}: includes from unknown folder '{included}/'"
            elif layer is not None and LAYERS.index(included) > LAYERS.index(layer):
                yield f"src/{relative}: layer '{layer}' includes '{included}/', a layer above it"
    for path in sorted((root / "analysis").glob("*.[ch]pp")):
        for included in INCLUDE.findall(path.read_text()):
            if included not in ANALYSIS_MAY_INCLUDE:
                yield f"analysis/{path.name}: includes '{included}/'; the analyzer builds on src/predict, src/stats, src/results, src/config and src/model only"
    loose = [p.name for p in (root / "src").iterdir() if p.is_file() and p.name != "CMakeLists.txt"]
    if len(loose) > 3:
        yield f"src/ holds {len(loose)} loose source files ({', '.join(sorted(loose))}); at most 3 belong there"


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    found = list(violations(root))
    for line in found:
        print(line)
    print(f"layering: {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
