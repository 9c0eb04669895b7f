#!/usr/bin/python3
"""Purpose: writes mgpu_bench's results format (docs/results-format.md, schema_version 17) with h5py alone, for the
framework peers in bench/peers/: the same groups, attributes, types, shapes, units and flush-after-every-run
behaviour as src/results/results_writer.cpp, so `mgpu_analyze`, tests/end_to_end/check_results_h5py.py and read_results_file read a peer's
file like ours. Needs h5py and numpy, not torch.

Self-test (CI, tests/CMakeLists.txt): `results_h5.py --self-test FILE.h5` writes a small file of synthetic numbers
through this module, which our C++ reader and the h5py check must accept.
"""
import argparse
import datetime
import math
import os
import re
import subprocess
import sys

import h5py
import numpy as np

SCHEMA_VERSION = 17


def read_presets():
    """mgpu_bench's model presets, read from their one list (src/model/presets.def): name -> (layer widths, input to
    output, and dropout)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "model", "presets.def")
    presets = {}
    with open(path) as stream:
        for match in re.finditer(r"^MGPU_PRESET\((\w+), ([0-9.]+), ([0-9, ]+)\)$", stream.read(), re.M):
            presets[match.group(1)] = ([int(w) for w in match.group(3).split(",")], float(match.group(2)))
    if not presets:
        sys.exit(f"results_h5: no MGPU_PRESET line in {path}")
    return presets


PRESETS = read_presets()
PRODUCER = "mgpu_bench"  # the format's name; `implementation` says which code measured (results_schema.hpp)
PHASES = ["forward", "backward", "allreduce", "exposed_comm", "optimizer", "step"]
PHASE_DESCRIPTIONS = {
    "forward": "forward pass per rank and step: batch in place -> loss",
    "backward": "backward pass per rank and step: loss -> last gradient written",
    "allreduce": "gradient all-reduce per rank and step: first reduction launched -> last complete (communication stream)",
    "exposed_comm": "communication not hidden by backward per rank and step: backward end -> all reductions complete",
    "optimizer": "optimizer (Adam) update per rank and step",
    "step": "whole training step per rank and step: start -> end; a distributed step takes the max over ranks",
}
THROTTLE_FRACTION = 0.75  # docs/measurement.md

STRING = h5py.string_dtype("utf-8")  # variable-length UTF-8, as the C++ writer stores every string

# Configuration attributes and their stored types (results_schema.hpp's for_each_attribute_of_configuration, plus the
# v2 attributes of the step and sweep work: graph, overlap, bucket_mb, grad_dtype, accumulate_steps, timing,
# environment_preset, attempt, v4's fused_optimizer, which a peer always writes "off", and v5's overlap_order: DDP's
# buckets follow backward layer by layer, "layerwise"; "n/a" without overlap; v6's gemm_tuning, "n/a" for a peer, whose
# GEMMs are the framework's, and gemm_choices, ""; v12's overlap_update: DDP's optimizer steps once backward and
# every bucket's reduction are done, "after-last"; "n/a" without overlap; v14's nccl_max_ctas and overlap_sm_target:
# a peer sets neither, 0; v17's step_kernel, "n/a" for a peer, whose kernels are the framework's, and step_kernel_chosen,
# ""). A value missing from the caller's dict is an error: every attribute is written.
CONFIGURATION_ATTRIBUTES = {
    "implementation": "str", "model": "str", "layer_widths": "i4[]", "dropout": "f8", "parameter_count": "i8",
    "dense_weight_count": "i8", "global_batch": "i4", "local_batch": "i4", "batch_mode": "str", "ranks": "i4",
    "device": "str", "precision": "str", "warmup_steps": "i4", "measured_steps": "i4", "runs_requested": "i4",
    "seed": "u8", "adam_learning_rate": "f8", "adam_beta1": "f8", "adam_beta2": "f8", "adam_epsilon": "f8",
    "nccl_algo": "str", "nccl_proto": "str", "nccl_environment": "str[]", "command_line": "str",
    "started_utc": "str", "cuda_runtime_version": "str", "cuda_driver_version": "str", "cublas_version": "str",
    "nccl_version": "str", "mpi_library_version": "str", "hosts": "str[]", "gpu_names": "str[]",
    "gpu_uuids": "str[]", "gpu_pci_bus_ids": "str[]", "peer_topology": "str[]", "max_sm_clock_mhz": "f8[]",
    "max_memory_clock_mhz": "f8[]",
    "graph": "str", "overlap": "str", "bucket_mb": "f8", "grad_dtype": "str", "accumulate_steps": "i4",
    "timing": "str", "environment_preset": "str", "attempt": "i4", "trial": "i4", "fused_optimizer": "str",
    "overlap_order": "str", "optimizer_sharding": "str", "overlap_update": "str",
    "gemm_tuning": "str", "gemm_choices": "str", "nccl_max_ctas": "i4", "overlap_sm_target": "i4",
    "step_kernel": "str", "step_kernel_chosen": "str",
}
PER_RANK = ["hosts", "gpu_names", "gpu_uuids", "gpu_pci_bus_ids", "peer_topology", "max_sm_clock_mhz",
            "max_memory_clock_mhz"]


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def git_revision():
    """The repository's short revision (+ "-dirty"), as the C++ build records it; "unknown" outside a checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        revision = subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                  text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", here, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return revision + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def typed(kind, value):
    if kind == "str":
        return str(value)
    if kind == "str[]":
        return np.array([str(v) for v in value], dtype=STRING)
    if kind.endswith("[]"):
        return np.asarray(value, dtype=kind[:-2])
    return np.dtype(kind).type(value)


def create(path, force, project_version):
    """A new results file with the root attributes and an empty /configurations (creation order tracked). Refuses an
    existing file unless force, like mgpu_bench."""
    if os.path.exists(path) and not force:
        raise SystemExit(f"results_h5: error: output file '{path}' exists; use --force to overwrite")
    f = h5py.File(path, "w", track_order=True)
    f.attrs["schema_version"] = np.int32(SCHEMA_VERSION)
    f.attrs["producer"] = PRODUCER
    f.attrs["project_version"] = str(project_version)
    f.attrs["git_revision"] = git_revision()
    f.attrs["created_utc"] = utc_now()
    f.create_group("configurations", track_order=True)
    f.flush()
    return f


def add_configuration(f, name, attributes):
    """/configurations/<name> with every attribute, is_warmup and the empty per-run datasets."""
    missing = sorted(set(CONFIGURATION_ATTRIBUTES) - set(attributes))
    unknown = sorted(set(attributes) - set(CONFIGURATION_ATTRIBUTES))
    if missing or unknown:
        raise ValueError(f"configuration {name}: missing attributes {missing}, unknown {unknown}")
    ranks = int(attributes["ranks"])
    for attribute in PER_RANK:
        if len(attributes[attribute]) != ranks:
            raise ValueError(f"configuration {name}: {attribute} has {len(attributes[attribute])} entries for {ranks} ranks")
    group = f["configurations"].create_group(name)
    for attribute, kind in CONFIGURATION_ATTRIBUTES.items():
        group.attrs[attribute] = typed(kind, attributes[attribute])
    group.attrs["runs_completed"] = np.int32(0)
    group.attrs["complete"] = np.int32(0)
    group.attrs["finished_utc"] = ""
    group.attrs["interrupted"] = ""  # v7: why a run stopped early; the peer does not mark it
    group.attrs["interrupted_utc"] = ""
    group.attrs["replica_check"] = ""  # v9: "" = not checked (DDP keeps the peer's replicas; the peer does not hash them)
    # v10: the peer runs no math check ("" = not checked) and tunes no GEMM candidates of its own.
    group.attrs["stopped_early"] = ""  # v10: the peer runs every run it was asked for
    group.attrs["math_check"] = ""
    group.attrs["math_check_errors"] = np.zeros(0, dtype="f8")
    group.attrs["math_check_tolerance"] = np.float64(0.0)
    group.attrs["math_check_steps"] = np.int32(0)
    group.attrs["math_check_seconds"] = np.float64(0.0)
    group.attrs["gemm_candidates_checked"] = np.int32(0)
    group.attrs["gemm_candidates_rejected"] = np.int32(0)
    # v15: what mgpu_bench's console printed that its runs do not say; the peer prints its own, so none is recorded.
    for printed in ("setup", "unique_id_check", "job_notice", "job_plan"):
        group.attrs[printed] = ""
    warmup, measured = int(attributes["warmup_steps"]), int(attributes["measured_steps"])
    steps = warmup + measured
    dataset = group.create_dataset("is_warmup", data=np.array([1] * warmup + [0] * measured, dtype="u1"),
                                   chunks=(warmup + measured,), fletcher32=True)
    describe(dataset, "1", "1 where the step is a warm-up step (excluded from statistics), 0 where measured")

    def per_run(dataset_name, shape, dtype, units, description):
        d = group.create_dataset(dataset_name, shape=(0,) + shape, maxshape=(None,) + shape, chunks=(1,) + shape,
                                 dtype=dtype, fletcher32=True)
        describe(d, units, description)

    for phase in PHASES:
        per_run(f"{phase}_ms", (ranks, steps), "f8", "ms", PHASE_DESCRIPTIONS[phase])
    per_run("loss", (steps,), "f8", "1", "MSE loss per run and step: mean over ranks of each rank's local-batch loss")
    per_run("memory_peak_bytes", (ranks,), "i8", "bytes",
            "peak memory per run and rank: GPU memory in use after the run (all of the GPU's users)")
    per_run("sm_clock_mhz", (ranks,), "f8", "MHz", "mean SM clock sampled during the run; 0 = not available")
    per_run("memory_clock_mhz", (ranks,), "f8", "MHz", "mean memory clock sampled during the run; 0 = not available")
    per_run("clock_samples", (ranks,), "i4", "1", "number of clock samples behind sm_clock_mhz and memory_clock_mhz")
    per_run("throttled", (ranks,), "u1", "1",
            "1 when the run's mean SM clock is below 75% of the rank's max_sm_clock_mhz (both known), else 0")
    per_run("wall_per_step_ms", (ranks,), "f8", "ms",
            "wall time per measured step per run and rank: first measured step's start -> last measured step's end "
            "(CUDA events), gaps between steps included, divided by the measured steps; NaN = not measured")
    per_run("phases_marked", (ranks,), "f8", "1",
            "1 where the run timed its steps as it times every run (a peer's runs are all of one kind), 0 where it "
            "left its steps without marks")
    per_run("batch_generation_ms", (ranks,), "f8", "ms",
            "per step, batch generation timed alone and subtracted from an unmarked run's step; NaN = not subtracted")
    f.flush()
    return group


def describe(dataset, units, description):
    dataset.attrs["units"] = units
    dataset.attrs["description"] = description


def append_run(group, phase_ms, loss, memory_peak_bytes, sm_clock_mhz, memory_clock_mhz, clock_samples,
               wall_per_step_ms=None):
    """One run of every rank: phase_ms {phase: [ranks, steps]} (NaN = not measured separately), loss [steps] (mean
    over ranks), the rest [ranks]; wall_per_step_ms None = not measured (NaN). runs_completed moves only after every
    dataset holds the run; then a flush."""
    run = int(group.attrs["runs_completed"])
    max_sm = np.asarray(group.attrs["max_sm_clock_mhz"], dtype=float)
    sm = np.asarray(sm_clock_mhz, dtype=float)
    rows = {f"{phase}_ms": np.asarray(phase_ms[phase], dtype="f8") for phase in PHASES}
    rows.update({
        "loss": np.asarray(loss, dtype="f8"),
        "memory_peak_bytes": np.asarray(memory_peak_bytes, dtype="i8"),
        "sm_clock_mhz": sm,
        "memory_clock_mhz": np.asarray(memory_clock_mhz, dtype="f8"),
        "clock_samples": np.asarray(clock_samples, dtype="i4"),
        "throttled": ((sm > 0) & (max_sm > 0) & (sm < THROTTLE_FRACTION * max_sm)).astype("u1"),
        "wall_per_step_ms": np.asarray(np.full(len(sm), math.nan) if wall_per_step_ms is None else wall_per_step_ms,
                                       dtype="f8"),
        # Every run of a peer is timed alike: one kind of run, which the analyzer uses for everything.
        "phases_marked": np.ones(len(sm), dtype="f8"),
        "batch_generation_ms": np.full(len(sm), math.nan, dtype="f8"),
    })
    for name, row in rows.items():
        dataset = group[name]
        if row.shape != dataset.shape[1:]:
            raise ValueError(f"{group.name}/{name}: a run of shape {row.shape}, expected {dataset.shape[1:]}")
        dataset.resize(run + 1, axis=0)
        dataset[run] = row
    group.attrs["runs_completed"] = np.int32(run + 1)
    group.file.flush()


def finish(group):
    group.attrs["complete"] = np.int32(1)
    group.attrs["finished_utc"] = utc_now()
    group.file.flush()


def self_test(path):
    """A 2-rank configuration of 2 runs with synthetic numbers, NaN where a peer cannot separate a phase."""
    ranks, warmup, measured = 2, 1, 3
    steps = warmup + measured
    with create(path, True, "self-test") as f:
        attributes = {
            "implementation": "pytorch-ddp", "model": "medium", "layer_widths": [847, 256, 128, 64, 3],
            "dropout": 0.2, "parameter_count": 258432, "dense_weight_count": 258048, "global_batch": 64,
            "local_batch": 32, "batch_mode": "global", "ranks": ranks, "device": "cuda", "precision": "fp32",
            "warmup_steps": warmup, "measured_steps": measured, "runs_requested": 2, "seed": 1,
            "adam_learning_rate": 1e-3, "adam_beta1": 0.9, "adam_beta2": 0.999, "adam_epsilon": 1e-7,
            "nccl_algo": "default", "nccl_proto": "default", "nccl_environment": ["NCCL_NVLS_ENABLE=0"],
            "command_line": "results_h5.py --self-test", "started_utc": utc_now(), "cuda_runtime_version": "13.0",
            "cuda_driver_version": "13.0", "cublas_version": "n/a", "nccl_version": "2.28.3",
            "mpi_library_version": "n/a", "hosts": ["vm", "vm"], "gpu_names": ["GPU", "GPU"],
            "gpu_uuids": ["GPU-0", "GPU-1"], "gpu_pci_bus_ids": ["0000:00:06.0", "0000:00:07.0"],
            "peer_topology": ["rank 1", "rank 0"], "max_sm_clock_mhz": [1980.0, 0.0],
            "max_memory_clock_mhz": [3201.0, 3201.0], "graph": "off", "overlap": "on", "overlap_order": "layerwise",
            "overlap_update": "after-last",
            "bucket_mb": 25.0,
            "grad_dtype": "fp32", "accumulate_steps": 1, "timing": "events", "environment_preset": "none", "attempt": 1,
            "trial": 1,
            "fused_optimizer": "off", "optimizer_sharding": "off", "gemm_tuning": "n/a", "gemm_choices": "",
            "nccl_max_ctas": 0, "overlap_sm_target": 0, "step_kernel": "n/a", "step_kernel_chosen": "",
        }
        group = add_configuration(f, "medium_b64_n2_pytorch-ddp", attributes)
        for run in range(2):
            phases = {phase: np.full((ranks, steps), 0.01 * (p + 1) + run) for p, phase in enumerate(PHASES)}
            phases["allreduce"][:] = math.nan
            phases["exposed_comm"][:] = math.nan
            # Run 0 measured its wall time per step, run 1 did not (NaN): both are valid.
            wall = [0.07, 0.071] if run == 0 else None
            append_run(group, phases, np.linspace(1.0, 0.5, steps), [10**9, 10**9 + 1], [1900.0, 1000.0],
                       [3201.0, 3201.0], [3, 3], wall)
        finish(group)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--self-test", metavar="FILE", required=True, help="write a synthetic peer file")
    arguments = parser.parse_args(argv[1:])
    self_test(arguments.self_test)
    print(f"wrote {arguments.self_test}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
