#!/usr/bin/env python3
"""Purpose: a second mutation sample whose operators mutation_sample.py does not use (an integer literal + 1,
std::min <-> std::max, true <-> false, ' * ' <-> ' / ', a leading '!' dropped), over src/stats, src/results, src/cli
and analysis/, sites drawn with a seed of its own: a check of the tests that the first sampler's own survivors did
not shape. Left out: the size of a char array (`char text[64]`), whose + 1 only enlarges a buffer every write into
it bounds by its own size, an equivalent mutant by construction (two of seed 1127's sixteen). Built and tested by
mutation_sample.py's runner (the sanitized build). Not run by CI (docs/testing.md).

Usage: BUILD_DIR=build-sanitize python3 tests/mutation/independent_sample.py [--count 20] [--seed 1126]
"""
import argparse
import os
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mutation_sample as ms  # noqa: E402  (the runner, the CPU build's lines, the test folders)

# Each pattern, its replacement and its name in the output.
PATTERNS = [
    (re.compile(r"(?<![\w.])(\d+)(?![\w.])"), lambda m: str(int(m.group(1)) + 1), "literal+1"),
    (re.compile(r"std::min\b"), lambda m: "std::max", "min->max"),
    (re.compile(r"std::max\b"), lambda m: "std::min", "max->min"),
    (re.compile(r"\btrue\b"), lambda m: "false", "true->false"),
    (re.compile(r"\bfalse\b"), lambda m: "true", "false->true"),
    (re.compile(r" \* "), lambda m: " / ", "*->/"),
    (re.compile(r" / "), lambda m: " * ", "/->*"),
    (re.compile(r"\(!(?=[\w(])"), lambda m: "(", "drop !"),
]

# A char array's declared size just before a literal: "char text[" (see the docstring).
CHAR_ARRAY_SIZE = re.compile(r"\bchar \w+\[$")


def in_scope(path):
    parts = path.relative_to(ms.ROOT).parts
    return parts[0] == "analysis" or parts[1] in ("stats", "results", "cli")


def sites():
    found = []
    for path in filter(in_scope, ms.source_files()):
        lines = path.read_text().splitlines()
        for number, (line, compiled) in enumerate(zip(lines, ms.cpu_build_lines(lines)), 1):
            code = ms.code_part(line)
            if not compiled or not code.strip() or code.lstrip().startswith(("#", "static_assert")):
                continue
            for pattern, replace, name in PATTERNS:
                for match in pattern.finditer(code):
                    if name == "literal+1" and CHAR_ARRAY_SIZE.search(code[: match.start()]):
                        continue
                    found.append((path, number, match.start(), match.end(), replace(match), name))
    return found


def mutant(path, number, start, end, replacement, name):
    lines = path.read_text().splitlines(keepends=True)
    line = lines[number - 1]
    lines[number - 1] = line[:start] + replacement + line[end:]
    return path, "".join(lines), f"{path.relative_to(ms.ROOT)}:{number}: {name}", lines[number - 1].strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1126)
    args = parser.parse_args()
    build = Path(os.environ.get("BUILD_DIR", ms.ROOT / "build-sanitize")).resolve()
    draw = sites()
    random.Random(args.seed).shuffle(draw)
    print(f"{len(draw)} sites; drawing {args.count} with seed {args.seed}", flush=True)
    return ms.run_sample((mutant(*site) for site in draw), args.count, build, ms.registered_tests(build))


if __name__ == "__main__":
    sys.exit(main())
