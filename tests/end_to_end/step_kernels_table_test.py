#!/usr/bin/python3
"""Purpose: bench/step_kernels_table.py's rules on a made-up profile (ncu's CSV with its units row and grouped
thousands: one step is the profile over its steps, the kernels before the step's start mark are left out of the step,
each kernel is bound by the unit at 60% of its peak or by its latency), and the archived table being what the script
makes of the archived profiles.

Usage: step_kernels_table_test.py ROOT WORK_DIR
"""
import pathlib
import subprocess
import sys
import tarfile

ARCHIVE = "bench/results/h100-2026-12-06"
ARCHIVED_CELLS = ("old/bf16:large:4096:auto bf16:large:4096:auto fp32:medium:8:chain fp32:medium:8:persistent "
                  "fp32:medium:64:auto fp32:medium:128:auto fp32:medium:1024:auto fp32:medium:4096:auto "
                  "fp32:large:8:auto fp32:large:128:auto tf32x3:large:1024:auto tf32x3:large:4096:auto").split()
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","dram__bytes.sum","dram__throughput.avg.pct_of_peak_sustained_elapsed",'
          '"gpu__time_duration.sum","sm__throughput.avg.pct_of_peak_sustained_elapsed"')
UNITS = '"","","","","","","","","","","","byte","%","nsecond","%"'


def row(index, name, grid, dram_bytes, dram_pct, ns, sm_pct):
    return (f'"{index}","7","mgpu_bench","host","{name}","1","13","(256, 1, 1)","{grid}","0","9.0",'
            f'"{dram_bytes}","{dram_pct}","{ns}","{sm_pct}"')


def made_up_profile(work):
    """Two steps: each a GEMM at 70% of the SM peak (1,500 ns), Adam at 80% of DRAM's (1,000 ns, 7,000,000 bytes) and
    the batch's generation before the start mark (500 ns)."""
    lines = ["==PROF== Connected to process 7", HEADER, UNITS]
    for step in range(2):
        lines += [row(3 * step, "void mgpu::generate_features_kernel(float*, int)", "(1, 8, 1)", "2,048", "1", "500",
                      "2"),
                  row(3 * step + 1, "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_kernel", "(2, 8, 1)", "1,000,000", "10",
                      "1,500", "70"),
                  row(3 * step + 2, "void mgpu::adam_kernel<4>(float*, float const*)", "(132, 1, 1)", "7,000,000",
                      "80", "1,000", "20")]
    (work / "fp32_medium_8_chain.csv").write_text("\n".join(lines) + "\n")
    (work / "fp32_medium_8_chain.txt").write_text("# mean step 0.0030 ms ~ forward 0.0000 (0%)\n")


def expect(problems, text, wanted, what):
    if wanted not in text:
        problems.append(f"{what}: no '{wanted}' in\n{text}")


def main(argv):
    root, work = pathlib.Path(argv[1]), pathlib.Path(argv[2])
    work.mkdir(parents=True, exist_ok=True)
    script = root / "bench" / "step_kernels_table.py"
    problems = []
    made_up_profile(work)
    table = subprocess.run([sys.executable, script, work, "2", "fp32:medium:8:chain"], check=True,
                           stdout=subprocess.PIPE, text=True).stdout
    expect(problems, table, "| fp32:medium:8:chain | 3.0 | 2 | 2.5 | 40% | 60% | 0% | 0.5 |", "the cell's summary")
    expect(problems, table, "| `sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_kernel` | (2, 8, 1) | 1 | 1.5 | 1.00 | 10 | 70 | "
           "SM |", "the GEMM's row")
    expect(problems, table, "| `mgpu::adam_kernel<4>` | (132, 1, 1) | 1 | 1.0 | 7.00 | 80 | 20 | DRAM |", "Adam's row")
    if "generate_features" in table.split("### fp32:medium:8:chain")[1]:
        problems.append("the batch's generation, before the start mark, is listed among the step's kernels")
    with tarfile.open(root / ARCHIVE / "step_kernels_files.tar.xz") as archive:
        archive.extractall(work / "archive")
    remade = subprocess.run([sys.executable, script, work / "archive" / "sk", "5", *ARCHIVED_CELLS], check=True,
                            stdout=subprocess.PIPE, text=True).stdout
    if remade != (root / ARCHIVE / "step_kernels.md").read_text():
        problems.append(f"{ARCHIVE}/step_kernels.md is not what bench/step_kernels_table.py makes of the archived "
                        "profiles: remake it")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
