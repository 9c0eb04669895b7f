#!/usr/bin/env python3
"""Checks that every C++/CUDA file git tracks is formatted as .clang-format says (clang-format --dry-run --Werror)
and has no line over 120 characters outside a raw string literal (expected program output). Exits 1 listing each
file that is not; 2 when clang-format is missing (launch/install-deps.sh --tests installs it).
Usage: check_format.py [ROOT] [CLANG_FORMAT]"""
import pathlib
import re
import shutil
import subprocess
import sys

COLUMNS = 120
RAW_STRING = re.compile(r'R"([^(\s]{0,16})\((.*?)\)\1"', re.S)


def long_lines(text: str):
    """Line numbers of lines over COLUMNS characters, raw string literals' contents blanked out first."""
    blanked = RAW_STRING.sub(lambda m: re.sub(r"[^\n]", "", m.group(0)), text)
    return [number for number, line in enumerate(blanked.splitlines(), 1) if len(line) > COLUMNS]


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    clang_format = sys.argv[2] if len(sys.argv) > 2 else shutil.which("clang-format")
    if clang_format is None:
        print("check_format: clang-format not found (launch/install-deps.sh --tests installs it)")
        return 2
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "*.cpp", "*.hpp", "*.cu", "*.cuh"],
                            capture_output=True, text=True, check=True).stdout.split()
    problems = []
    for name in listed:
        path = root / name
        run = subprocess.run([clang_format, "--dry-run", "--Werror", str(path)], capture_output=True, text=True)
        if run.returncode != 0:
            problems.append(f"{name}: not formatted (clang-format -i {name})")
        for number in long_lines(path.read_text()):
            problems.append(f"{name}:{number}: over {COLUMNS} characters")
    for problem in problems:
        print(problem)
    print(f"format: {len(listed)} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
