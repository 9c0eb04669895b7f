#!/usr/bin/python3
"""Purpose: checks an mgpu_bench results file with h5py alone (none of our code), as a user of the format would read
it (docs/results-format.md): schema version, every configuration's datasets consistent with its attributes, and one
throughput line per configuration; the standalone /allreduce and /probe groups when present (shapes against their
attributes, algbw/busbw recomputed from the times, a passed data check). Files of the PyTorch peer (bench/peers/,
implementation "pytorch-*") pass the same checks; their phases that cannot be separated are NaN.
Exits 1 on any inconsistency, 2 on bad usage.

Usage: /usr/bin/python3 tests/end_to_end/check_results_h5py.py FILE.h5 [--expect-runs R] [--expect-ranks N] [--expect-steps T]
       [--expect-complete] [--expect-configurations C] [--expect-preset NAME] [--expect-interrupted TEXT]
(the --expect-* options, for a file whose run is known, also require every configuration to have those sizes;
steps = warm-up + measured; --expect-configurations: the file holds C configurations (a sweep), each named with its
GPU count; --expect-preset: every configuration records that environment_preset and NCCL_NVLS_ENABLE=0;
--expect-interrupted: every configuration was stopped early, its interrupted attribute containing TEXT)
"""
import argparse
import sys

import h5py
import numpy as np

SUPPORTED_SCHEMA_VERSION = 16
IMPLEMENTATIONS = ("mgpu_bench", "pytorch-ddp", "pytorch-graph")
PHASES = ["forward", "backward", "allreduce", "exposed_comm", "optimizer", "step"]
THROTTLE_FRACTION = 0.75  # docs/measurement.md: mean SM clock below 75% of the maximum

# name -> (shape in terms of runs/ranks/steps, numpy kind and size, units); the names are spelled out on purpose, so
# a change in the writer that the document does not follow fails here.
PER_RUN_DATASETS = {f"{phase}_ms": (("runs", "ranks", "steps"), "f8", "ms") for phase in PHASES}
PER_RUN_DATASETS.update({
    "loss": (("runs", "steps"), "f8", "1"),
    "memory_peak_bytes": (("runs", "ranks"), "i8", "bytes"),
    "sm_clock_mhz": (("runs", "ranks"), "f8", "MHz"),
    "memory_clock_mhz": (("runs", "ranks"), "f8", "MHz"),
    "clock_samples": (("runs", "ranks"), "i4", "1"),
    "throttled": (("runs", "ranks"), "u1", "1"),
    "wall_per_step_ms": (("runs", "ranks"), "f8", "ms"),
    "phases_marked": (("runs", "ranks"), "f8", "1"),
    "batch_generation_ms": (("runs", "ranks"), "f8", "ms"),
})
# Per-run datasets added after version 1, with the version that added them: a file of an older version may lack one.
DATASETS_ADDED_IN = {"wall_per_step_ms": 3, "phases_marked": 7, "batch_generation_ms": 7}
PER_RANK_ATTRIBUTES = ["hosts", "gpu_names", "gpu_uuids", "gpu_pci_bus_ids", "peer_topology", "max_sm_clock_mhz",
                       "max_memory_clock_mhz"]


def check_configuration(name, group, expected_sizes, flags, problems, version):
    """Appends what is wrong with one configuration to problems; returns its throughput line. expected_sizes: sizes
    the caller requires ({"runs": 3, ...}), empty to accept any. flags: what else the caller requires ({"complete":
    True, "configurations": C, "preset": NAME}, each only when asked). version: the file's schema_version."""
    def problem(text):
        problems.append(f"{name}: {text}")

    try:
        ranks = int(group.attrs["ranks"])
        warmup = int(group.attrs["warmup_steps"])
        measured = int(group.attrs["measured_steps"])
        runs = int(group.attrs["runs_completed"])
        global_batch = int(group.attrs["global_batch"])
    except KeyError as missing:
        problem(f"missing attribute {missing}")
        return None
    steps = warmup + measured
    sizes = {"runs": runs, "ranks": ranks, "steps": steps}
    for size, value in expected_sizes.items():
        if sizes[size] != value:
            problem(f"{size} is {sizes[size]}, expected {value}")
    if "complete" in flags:
        if int(group.attrs.get("complete", 0)) != 1 or not group.attrs.get("finished_utc"):
            problem("not marked complete (complete = 1 and finished_utc set)")
    if "configurations" in flags:
        # A sweep's groups are unique by model, batch and GPU count: the name carries the GPU count.
        if f"_n{ranks}_" not in name:
            problem(f"name does not carry its GPU count (_n{ranks}_)")
    if "preset" in flags:
        preset = flags["preset"]
        environment = list(group.attrs.get("nccl_environment", []))
        if group.attrs.get("environment_preset") != preset:
            problem(f"environment_preset is {group.attrs.get('environment_preset')!r}, expected {preset!r}")
        if "NCCL_NVLS_ENABLE=0" not in environment:
            problem(f"nccl_environment {environment} lacks NCCL_NVLS_ENABLE=0")

    for attribute in PER_RANK_ATTRIBUTES:
        if attribute not in group.attrs:
            problem(f"missing attribute '{attribute}'")
        elif len(group.attrs[attribute]) != ranks:
            problem(f"attribute '{attribute}' has {len(group.attrs[attribute])} entries for {ranks} ranks")
    for attribute in ["complete", "finished_utc", "started_utc", "seed", "nccl_environment", "command_line"]:
        if attribute not in group.attrs:
            problem(f"missing attribute '{attribute}'")
    # schema_version 2 added implementation; a version 1 file means mgpu_bench.
    implementation = group.attrs.get("implementation", "mgpu_bench")
    if implementation not in IMPLEMENTATIONS:
        problem(f"implementation is {implementation!r}, expected one of {IMPLEMENTATIONS}")
    # schema_version 4 added fused_optimizer ("on" only with one rank); an older file lacks it and means "off".
    if version >= 4 and "fused_optimizer" not in group.attrs:
        problem("missing attribute 'fused_optimizer'")
    fused_optimizer = group.attrs.get("fused_optimizer", "off")
    if fused_optimizer not in ("on", "off"):
        problem(f"fused_optimizer is {fused_optimizer!r}, expected 'on' or 'off'")
    elif fused_optimizer == "on" and ranks != 1:
        problem(f"fused_optimizer is 'on' with {ranks} ranks (one rank only)")
    # Settings that exist only with overlap on, and the schema_version that added each: one of its values with overlap
    # on, "n/a" with it off; an older file lacks it (its overlap, if any, was layerwise and updated per bucket).
    for attribute, added, values in (("overlap_order", 5, ("deferred", "layerwise")),
                                     ("overlap_update", 12, ("per-bucket", "after-last"))):
        if version < added:
            continue
        value = group.attrs.get(attribute)
        expected = values if group.attrs.get("overlap") == "on" else ("n/a",)
        if value is None:
            problem(f"missing attribute '{attribute}'")
        elif value not in expected:
            problem(f"{attribute} is {value!r} with overlap {group.attrs.get('overlap')!r}, expected one of {expected}")

    # schema_version 6 added gemm_tuning ("step" or "alone" on CUDA, "n/a" on the CPU fallback and for a framework
    # peer) and gemm_choices (what ran each GEMM shape on rank 0; empty where nothing was chosen).
    if version >= 6:
        gemm_tuning = group.attrs.get("gemm_tuning")
        choices = group.attrs.get("gemm_choices")
        if gemm_tuning is None or choices is None:
            problem("missing attribute 'gemm_tuning' or 'gemm_choices'")
        elif gemm_tuning not in ("step", "alone", "n/a"):
            problem(f"gemm_tuning is {gemm_tuning!r}, expected 'step', 'alone' or 'n/a'")
        elif gemm_tuning == "step" and group.attrs.get("graph") != "on":
            problem("gemm_tuning is 'step' without graph 'on' (it replays the captured step)")
        elif (gemm_tuning == "n/a") != (choices == ""):
            problem(f"gemm_choices is {'empty' if choices == '' else 'set'} with gemm_tuning {gemm_tuning!r}")

    # schema_version 14 added nccl_max_ctas (0: NCCL's choice) and overlap_sm_target (0: every SM; 0 without overlap).
    if version >= 14:
        for attribute, most in (("nccl_max_ctas", 64), ("overlap_sm_target", 1024)):
            value = group.attrs.get(attribute)
            if value is None:
                problem(f"missing attribute '{attribute}'")
            elif not 0 <= int(value) <= most:
                problem(f"{attribute} is {value}, expected 0 to {most}")
        if group.attrs.get("overlap") != "on" and int(group.attrs.get("overlap_sm_target", 0)) != 0:
            problem("overlap_sm_target is set with overlap off (it applies only with overlap)")

    # schema_version 15 added what the job printed that no run says (mgpu_bench replay's source): the set-up line,
    # the unique id's check, the job's notice and plan, each a string ("" where the job printed none).
    if version >= 15:
        for attribute in ("setup", "unique_id_check", "job_notice", "job_plan"):
            if not isinstance(group.attrs.get(attribute), str):
                problem(f"missing string attribute '{attribute}'")

    # schema_version 7 added interrupted (why the benchmark stopped before completing the configuration: "SIGTERM",
    # "watchdog: ...", a full disk; "" when it was not stopped) and interrupted_utc, and a Fletcher32 checksum on
    # every dataset (h5py verifies it on every read: a damaged chunk raises OSError).
    if version >= 7:
        interrupted = group.attrs.get("interrupted")
        if interrupted is None or group.attrs.get("interrupted_utc") is None:
            problem("missing attribute 'interrupted' or 'interrupted_utc'")
        elif interrupted and int(group.attrs.get("complete", 0)) == 1:
            problem(f"complete = 1 but interrupted is {interrupted!r}")
        elif bool(interrupted) != bool(group.attrs.get("interrupted_utc")):
            problem("interrupted and interrupted_utc are not set together")
        if "interrupted" in flags and flags["interrupted"] not in (interrupted or ""):
            problem(f"interrupted is {interrupted!r}, expected it to contain {flags['interrupted']!r}")
        for dataset_name, dataset in group.items():
            if isinstance(dataset, h5py.Dataset) and not dataset.fletcher32:
                problem(f"dataset '{dataset_name}' has no Fletcher32 checksum")

    # schema_version 9 added replica_check: after mgpu_bench's runs, whether every rank's parameters were
    # bit-identical ("identical on N ranks (...)", "1 rank: nothing to compare"); a complete configuration passed it.
    if version >= 9 and group.attrs.get("implementation", "mgpu_bench") == "mgpu_bench":
        replica_check = group.attrs.get("replica_check")
        expected = "1 rank: nothing to compare" if ranks == 1 else f"identical on {ranks} ranks"
        if replica_check is None:
            problem("missing attribute 'replica_check'")
        elif int(group.attrs.get("complete", 0)) == 1 and not replica_check.startswith(expected):
            problem(f"complete, but replica_check is {replica_check!r}, expected it to start {expected!r}")

    # schema_version 10 added the math check: before its runs, a few steps of the configuration's step against the
    # plain reference of the same global batch; a configuration with runs passed it, with one error per rank.
    if version >= 10 and group.attrs.get("implementation", "mgpu_bench") == "mgpu_bench":
        math_check = group.attrs.get("math_check")
        errors = group.attrs.get("math_check_errors")
        if math_check is None or errors is None:
            problem("missing attribute 'math_check' or 'math_check_errors'")
        elif int(group.attrs.get("runs_completed", 0)) > 0 and not math_check.startswith("passed"):
            problem(f"runs recorded, but math_check is {math_check!r}")
        elif len(errors) != ranks or not all(e <= group.attrs["math_check_tolerance"] for e in errors):
            problem(f"math_check_errors {list(errors)} for {ranks} ranks, tolerance {group.attrs['math_check_tolerance']}")

    # schema_version 11 added optimizer_sharding ("on" only with more than one rank); an older file means "off".
    if version >= 11 and "optimizer_sharding" not in group.attrs:
        problem("missing attribute 'optimizer_sharding'")
    sharding = group.attrs.get("optimizer_sharding", "off")
    if sharding not in ("on", "off"):
        problem(f"optimizer_sharding is {sharding!r}, expected 'on' or 'off'")
    elif sharding == "on" and ranks < 2:
        problem(f"optimizer_sharding is 'on' with {ranks} rank (more than one only)")

    if "is_warmup" not in group:
        problem("missing dataset 'is_warmup'")
        return None
    is_warmup = group["is_warmup"][()]
    expected_warmup = np.array([1] * warmup + [0] * measured, dtype=np.uint8)
    if is_warmup.shape != expected_warmup.shape or not np.array_equal(is_warmup, expected_warmup):
        problem(f"is_warmup is {is_warmup.tolist()}, expected {warmup} ones then {measured} zeros")
        return None

    data = {}
    wanted = {dataset: spec for dataset, spec in PER_RUN_DATASETS.items()
              if dataset in group or version >= DATASETS_ADDED_IN.get(dataset, 1)}
    for dataset, (dims, dtype, units) in wanted.items():
        if dataset not in group:
            problem(f"missing dataset '{dataset}'")
            continue
        expected_shape = tuple(sizes[d] for d in dims)
        shape = group[dataset].shape
        # docs/results-format.md: a per-run dataset may hold one row more than runs_completed (an append that was
        # cut off); readers use the first runs_completed rows.
        extra_row_allowed = dims[0] == "runs" and len(shape) == len(expected_shape) and shape[0] == runs + 1
        if shape != expected_shape and not (extra_row_allowed and shape[1:] == expected_shape[1:]):
            problem(f"dataset '{dataset}' has shape {shape}, expected {expected_shape} "
                    f"({', '.join(dims)}; runs = runs_completed)")
            continue
        if group[dataset].dtype != np.dtype(dtype):
            problem(f"dataset '{dataset}' has type {group[dataset].dtype}, expected {np.dtype(dtype)}")
        if group[dataset].attrs.get("units") != units:
            problem(f"dataset '{dataset}' has units {group[dataset].attrs.get('units')!r}, expected {units!r}")
        data[dataset] = group[dataset][:runs] if dims[0] == "runs" else group[dataset][()]
    if len(data) != len(wanted):
        return None

    # The throttled flag must follow from the clocks it summarises.
    max_sm = np.asarray(group.attrs["max_sm_clock_mhz"], dtype=float)
    sm = data["sm_clock_mhz"]
    expected_throttled = (sm > 0) & (max_sm > 0) & (sm < THROTTLE_FRACTION * max_sm)
    if not np.array_equal(data["throttled"].astype(bool), expected_throttled):
        problem("throttled does not match sm_clock_mhz < 0.75 x max_sm_clock_mhz")
    # Wall time per measured step: positive, or NaN where the implementation could not measure it (the peer).
    wall = data.get("wall_per_step_ms", np.full((runs, ranks), np.nan))
    if np.any(wall[~np.isnan(wall)] <= 0):
        problem("wall_per_step_ms has a non-positive value")

    # Which runs marked their phases: 1 or 0 (NaN in an older file); the batch generation subtracted from a run
    # without marks inside its steps is positive, and NaN where nothing was subtracted (every phase-marked run).
    marked = data.get("phases_marked", np.full((runs, ranks), np.nan))
    generation = data.get("batch_generation_ms", np.full((runs, ranks), np.nan))
    if version >= 7:
        if not np.all((marked == 0) | (marked == 1)):
            problem("phases_marked holds a value other than 0 and 1")
        elif np.any(generation[~np.isnan(generation)] <= 0) or not np.all(np.isnan(generation[marked == 1])):
            problem("batch_generation_ms is not positive, or not NaN in a phase-marked run")

    if runs == 0:
        return f"{name}: no completed runs"
    # Wall per step of a run: its slowest rank's; NaN when not measured.
    wall_ms = float("nan") if np.all(np.isnan(wall)) else float(np.nanmean(wall.max(axis=1)))
    # Where a configuration has both kinds of run (timing "interleaved"), its throughput comes from the runs without
    # marks and its phases from the phase-marked ones (docs/statistics.md), as mgpu_bench and mgpu_analyze read them.
    run_marked = marked[:, 0] == 1
    both_kinds = bool(run_marked.any() and (~run_marked).any())
    timed_runs = ~run_marked if both_kinds else np.ones(runs, dtype=bool)
    phase_runs = run_marked if both_kinds else np.ones(runs, dtype=bool)
    # docs/measurement.md: a distributed step takes the max over ranks; throughput = global_batch x S / sum of step times.
    step_s = data["step_ms"][:, :, is_warmup == 0].max(axis=1) / 1000.0
    throughput = global_batch * measured / step_s.sum(axis=1)
    if not np.all(np.isfinite(throughput)) or np.any(throughput <= 0):
        problem("a run has a non-positive or infinite throughput (step_ms <= 0?)")
    throughput = throughput[timed_runs]
    # Each phase the same way as the step: max over ranks per step, then the mean over measured steps and runs. NaN
    # marks a phase the implementation cannot separate (the PyTorch peer), and stays NaN.
    phases = ", ".join(f"{phase} {data[f'{phase}_ms'][phase_runs][:, :, is_warmup == 0].max(axis=1).mean():.4f}"
                       for phase in PHASES)
    return (f"{name} [{implementation}]: {runs} runs x {ranks} ranks ({int(timed_runs.sum())} timing the throughput), "
            f"throughput mean {throughput.mean():.1f} samples/s "
            f"(min {throughput.min():.1f}, max {throughput.max():.1f}); mean ms: {phases}; "
            f"peak memory/rank {data['memory_peak_bytes'].max() / 1e6:.0f} MB; "
            f"wall per measured step {wall_ms:.4f} ms; "
            f"mean SM clock {data['sm_clock_mhz'].mean():.0f} MHz, throttled runs {int(data['throttled'].any(axis=1).sum())}")


def expect_shape(where, group, name, shape, problems):
    """The dataset exists with this shape; returns its values or None."""
    if name not in group:
        problems.append(f"{where}: missing dataset '{name}'")
        return None
    if group[name].shape != tuple(shape):
        problems.append(f"{where}: dataset '{name}' has shape {group[name].shape}, expected {tuple(shape)}")
        return None
    return group[name][()]


def check_allreduce(group, problems, version):
    """/allreduce: shapes from runs, ranks and size_labels; algbw = bytes / max over ranks of time_ms (decimal GB/s),
    busbw = algbw x 2(N-1)/N (docs/measurement.md); every element of the data check right; from version 13 the nodes
    (the distinct hosts) and GPUs per node (the most ranks on a host). Returns a summary line."""
    where = "/allreduce"
    try:
        runs, ranks = int(group.attrs["runs"]), int(group.attrs["ranks"])
        sizes = len(group.attrs["size_labels"])
        passed = int(group.attrs["data_check_passed"])
    except KeyError as missing:
        problems.append(f"{where}: missing attribute {missing}")
        return None
    data = {name: expect_shape(where, group, name, shape, problems) for name, shape in [
        ("bytes", [sizes]), ("elements", [sizes]), ("wrong_elements", [sizes]), ("time_ms", [runs, ranks, sizes]),
        ("op_ms", [runs, ranks, sizes]), ("algbw_gbps", [runs, sizes]), ("busbw_gbps", [runs, sizes])]}
    if any(value is None for value in data.values()):
        return None
    algbw = data["bytes"][None, :] / (data["time_ms"].max(axis=1) * 1e-3) / 1e9
    if not np.allclose(algbw, data["algbw_gbps"], rtol=1e-9):
        problems.append(f"{where}: algbw_gbps is not bytes / max over ranks of time_ms")
    if not np.allclose(data["algbw_gbps"] * 2 * (ranks - 1) / ranks, data["busbw_gbps"], rtol=1e-9):
        problems.append(f"{where}: busbw_gbps is not algbw x 2(N-1)/N")
    if data["wrong_elements"].sum() != 0 or passed != 1:
        problems.append(f"{where}: data check failed ({int(data['wrong_elements'].sum())} wrong elements)")
    if version >= 13:
        hosts = [str(h) for h in group.attrs["hosts"]]
        nodes, per_node = int(group.attrs["nodes"]), int(group.attrs["gpus_per_node"])
        if nodes != len(set(hosts)) or per_node != max(hosts.count(h) for h in hosts):
            problems.append(f"{where}: nodes {nodes} and gpus_per_node {per_node} are not what the hosts {hosts} say")
        if int(group.attrs["nics_per_node"]) < 0:
            problems.append(f"{where}: nics_per_node {int(group.attrs['nics_per_node'])} is negative")
    labels = [str(label) for label in group.attrs["size_labels"]]
    gradients = "; ".join(f"{label} {int(b)} B: busbw {np.median(data['busbw_gbps'][:, i]):.1f} GB/s"
                          for i, (label, b) in enumerate(zip(labels, data["bytes"])) if label)
    return f"/allreduce: {sizes} sizes x {runs} runs x {ranks} ranks, data check passed; {gradients}"


def check_probe(group, problems):
    """/probe: shapes from runs and the label lists; every time positive. Returns a summary line."""
    where = "/probe"
    try:
        runs = int(group.attrs["runs"])
        copies, gemms = len(group.attrs["copy_labels"]), len(group.attrs["gemm_labels"])
        precisions, launches = len(group.attrs["gemm_precisions"]), len(group.attrs["launch_labels"])
    except KeyError as missing:
        problems.append(f"{where}: missing attribute {missing}")
        return None
    data = {name: expect_shape(where, group, name, shape, problems) for name, shape in [
        ("copy_bytes", [copies]), ("copy_ms", [runs, copies]), ("gemm_shape", [gemms, 3]),
        ("gemm_ms", [runs, precisions, gemms]), ("launch_ms", [runs, launches])]}
    if any(value is None for value in data.values()):
        return None
    if not all(np.all(data[name] > 0) for name in ("copy_ms", "gemm_ms", "launch_ms")):
        problems.append(f"{where}: a time is not positive")
        return None
    copy_gbps = (2 * data["copy_bytes"][None, :] / (data["copy_ms"] * 1e-3) / 1e9).max()
    flops = 2.0 * data["gemm_shape"].prod(axis=1)
    peak = (flops[None, None, :] / (data["gemm_ms"] * 1e-3) / 1e12).max(axis=(0, 2))
    rates = ", ".join(f"{p} {r:.0f}" for p, r in zip(group.attrs["gemm_precisions"], peak))
    return (f"/probe: copy up to {copy_gbps:.0f} GB/s; best GEMM TFLOP/s {rates}; launch us "
            + ", ".join(f"{l} {v:.2f}" for l, v in zip(group.attrs["launch_labels"],
                                                      np.median(data["launch_ms"], axis=0) * 1e3)))


def main(argv):
    parser = argparse.ArgumentParser(description="Check an mgpu_bench results file with h5py alone.")
    parser.add_argument("file", help="results file (.h5)")
    for size in ("runs", "ranks", "steps"):
        parser.add_argument(f"--expect-{size}", type=int, dest=size, help=f"require this many {size}")
    parser.add_argument("--expect-complete", action="store_true", dest="complete",
                        help="require every configuration to be marked complete")
    parser.add_argument("--expect-configurations", type=int, dest="configurations",
                        help="require this many configurations, each named with its GPU count")
    parser.add_argument("--expect-preset", dest="preset",
                        help="require every configuration to record this environment_preset and NCCL_NVLS_ENABLE=0")
    parser.add_argument("--expect-interrupted", dest="interrupted",
                        help="require every configuration's interrupted attribute to contain this text")
    arguments = parser.parse_args(argv[1:])  # exits 2 on bad usage
    sizes = {size: getattr(arguments, size) for size in ("runs", "ranks", "steps")
             if getattr(arguments, size) is not None}
    flags = {}
    if arguments.complete:
        flags["complete"] = True
    for key in ("configurations", "preset", "interrupted"):
        if getattr(arguments, key) is not None:
            flags[key] = getattr(arguments, key)
    path = arguments.file
    try:
        results = h5py.File(path, "r")
    except OSError as error:
        print(f"{path}: cannot open with h5py: {error}", file=sys.stderr)
        return 1
    problems = []
    with results:
        version = results.attrs.get("schema_version")
        producer = results.attrs.get("producer")
        if producer != "mgpu_bench":
            problems.append(f"producer is {producer!r}, expected 'mgpu_bench'")
        if version is None or not 1 <= int(version) <= SUPPORTED_SCHEMA_VERSION:
            problems.append(f"schema_version is {version}, this check reads 1..{SUPPORTED_SCHEMA_VERSION}")
        elif "configurations" not in results:
            problems.append("missing group '/configurations'")
        else:
            print(f"{path}: schema_version {int(version)}, git_revision {results.attrs.get('git_revision')}")
            count = len(results["configurations"])
            if count == 0 and (sizes or flags):
                problems.append("no configurations, expected at least one")
            if "configurations" in flags and count != flags["configurations"]:
                problems.append(f"{count} configurations, expected {flags['configurations']}")
            for name, group in results["configurations"].items():
                line = check_configuration(name, group, sizes, flags, problems, int(version))
                if line is not None:
                    print(line)
            for name, check in (("allreduce", lambda g, p: check_allreduce(g, p, int(version))),
                                ("probe", check_probe)):
                if name in results:
                    line = check(results[name], problems)
                    if line is not None:
                        print(line)
    for text in problems:
        print(f"{path}: {text}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
