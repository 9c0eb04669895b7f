#!/usr/bin/python3
"""Purpose: each check of check_claims.py on a small tree of pages: silent on pages that hold to the archive, and one
problem for each class brought back: a rate above the peak (in a TFLOP/s column and in prose), a run count the cited
file does not record, a pointer of bench/README.md to a missing file, a GPU target without its last measured value
or with a value its file does not state.

Usage: check_claims_test.py ROOT WORK_DIR
"""
import pathlib
import shutil
import sys

SUMMARY = """# A run

`GPUS=2 RUNS=5 bash bench/large_batch_performance.sh`; the probe's peak GEMM fp32 51 TFLOP/s, tf32 394 TFLOP/s.
2-GPU speedup at large 4096: 1.65.
"""
TABLE = "| model, batch | ours step ms | TFLOP/s per GPU |\n|---|---|---|\n| large 4096 | 2.8479 | 45.3 |\n"
PAGE = ("# A page\n\n## The grid\n\nFrom [the run](../bench/results/run/summary.md): 5 runs a configuration, "
        "47 TFLOP/s.\n")
BENCH_README = "# bench/\n\n`results/run/summary.md` holds the run; `study.ini` the grid.\n"
GPU_README = ("# GPU checks\n\n- `x.sh`: the 2-GPU speedup at large 4096 ≥ 1.85, never met: last measured 1.65\n"
              "  ([run](../../bench/results/run/summary.md)).\n")


def write(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def main(argv):
    source, work = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    sys.path.insert(0, str(source / "tests" / "end_to_end"))
    import check_claims
    shutil.rmtree(work, ignore_errors=True)
    good = {"README.md": "# x\n", "docs/page.md": PAGE, "bench/README.md": BENCH_README, "bench/study.ini": "",
            "bench/results/README.md": "# archive\n", "bench/results/run/summary.md": SUMMARY,
            "bench/results/run/table.md": TABLE, "tests/gpu/README.md": GPU_README}
    prose = lambda text: text  # noqa: E731 (the pages have no generated blocks or code)

    def found(case, check, changes):
        root = work / f"case{case}"
        write(root, {**good, **changes})
        run = getattr(check_claims, check)
        return run(root, prose) if check == "run_counts_uncited" else run(root)

    cases = [  # (check, changes, problems expected, why)
        ("rates_above_peak", {}, 0, "every rate under the stated peaks"),
        ("rates_above_peak", {"bench/results/run/table.md": TABLE.replace("45.3", "59.4")}, 1, "a column above peak"),
        ("rates_above_peak", {"docs/page.md": PAGE.replace("47 TFLOP/s", "48–59.6 TFLOP/s")}, 1, "prose above peak"),
        ("rates_above_peak", {"docs/page.md": PAGE.replace("47 TFLOP/s", "the tf32 step at 300 TFLOP/s")}, 0,
         "a tf32 rate under the tf32 peak"),
        ("run_counts_uncited", {}, 0, "the stated runs are the cited file's"),
        ("run_counts_uncited", {"docs/page.md": PAGE.replace("5 runs", "10 runs")}, 1, "a run count not recorded"),
        ("archive_pointers", {}, 0, "every pointer exists"),
        ("archive_pointers", {"bench/README.md": BENCH_README + "`results/run/peer_ddp.h5`, `results/gone/`\n"}, 2,
         "pointers to missing files"),
        ("gpu_targets_unmeasured", {}, 0, "the target shows its last value, which its file states"),
        ("gpu_targets_unmeasured", {"tests/gpu/README.md": GPU_README.replace("never met: last measured 1.65", "")}, 1,
         "a target without its last measured value"),
        ("gpu_targets_unmeasured", {"tests/gpu/README.md": GPU_README.replace("1.65", "1.70")}, 1,
         "a last value the file does not state"),
    ]
    failures = 0
    for case, (check, changes, expected, why) in enumerate(cases):
        problems = found(case, check, changes)
        ok = len(problems) == expected
        failures += 0 if ok else 1
        print(f"{'ok' if ok else 'FAILED'}: {check}, {why}: {len(problems)} problem(s), expected {expected}")
        for problem in problems:
            print(f"    {problem}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
