#!/usr/bin/env python3
"""Purpose: the framework peer of mgpu_bench: the study's MLPs trained the same way in PyTorch, eager DDP over NCCL
(`--mode ddp`, one process per GPU under torchrun), one CUDA-graph-captured step on one GPU (`--mode graph`), or
one CUDA-graph-captured data-parallel step on any number of GPUs under torchrun (`--mode graph-dp`: forward,
backward, the gradients gathered into one flat buffer, one all_reduce(AVG) of it and fused Adam, all inside the graph;
on one rank too, so that its code runs), timed per step with CUDA events and written in mgpu_bench's results format
(bench/peers/results_h5.py), so mgpu_analyze and docs/performance.md compare the two side by side. Nothing in the build
or CI needs PyTorch.

Same as mgpu_bench (docs/measurement.md): widths, ReLU + inverted dropout after every hidden layer, bias-free output layer,
Glorot-uniform weights and zero biases, MSE over the 3 targets, Adam (lr 1e-3, betas 0.9/0.999, eps 1e-7), global
batch split evenly across ranks (rank r takes the r-th contiguous slice), fp32 with TF32 off unless --precision says
otherwise, W warm-up + S measured steps per run, each run from a fresh initialisation, the batch put in place before
the step's first event. Different (documented in docs/performance.md): the random numbers (torch's generators, not our
counter hash: same distributions, same sizes and FLOPs, not the same bits), Adam is torch's fused kernel, and the
phases the framework does not separate are NaN: DDP reduces gradient buckets inside backward, so `backward` includes
the exposed all-reduce and `allreduce`/`exposed_comm` are NaN; a graph replay is one launch, so only `step` is
measured (forward/backward/optimizer NaN; for graph-dp `allreduce`/`exposed_comm` too). One rank of ddp or graph
reduces nothing: `allreduce` = `exposed_comm` = 0, as ours.
`wall_per_step_ms` is, as ours, the span from the first measured step's start event to the last step's end event
(the batch generation between steps included) divided by the measured steps; NaN only when no step is measured.

Usage (NVLink multicast off where NVLink SHARP is unavailable):
  NCCL_NVLS_ENABLE=0 python3 -m torch.distributed.run --standalone --nproc_per_node 2 bench/peers/torch_mlp.py \
      --mode ddp --config large:32 --config large:1024 --output peer_ddp.h5
  python3 bench/peers/torch_mlp.py --mode graph --config large:32 --config medium:64 --output peer_graph.h5
  NCCL_NVLS_ENABLE=0 python3 -m torch.distributed.run --standalone --nproc_per_node 2 bench/peers/torch_mlp.py \
      --mode graph-dp --config large:4096 --output peer_graph_dp.h5
"""
import argparse
import math
import os
import socket
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import results_h5  # noqa: E402

PRESETS = results_h5.PRESETS  # model -> (layer widths, dropout)
ADAM = {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-7}
DDP_BUCKET_MB = 25.0  # DDP's default bucket_cap_mb, recorded as bucket_mb


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description="PyTorch peer of mgpu_bench (eager DDP or a CUDA-graph step)")
    parser.add_argument("--mode", choices=["ddp", "graph", "graph-dp"], required=True,
                        help="ddp: eager DistributedDataParallel, one process per GPU (torchrun); graph: the whole "
                             "step captured in one CUDA graph, one GPU; graph-dp: the data-parallel step (one "
                             "all-reduce of a flat gradient buffer) captured in one CUDA graph per GPU (torchrun)")
    parser.add_argument("--config", action="append", required=True, metavar="MODEL:BATCH",
                        help="a preset and global batch, e.g. large:32 (repeatable)")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32",
                        help="fp32: TF32 off; tf32: matmuls on TF32; bf16: autocast to bf16, fp32 master weights")
    parser.add_argument("--output", required=True, help="results file (our HDF5 format)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output file")
    arguments = parser.parse_args(argv)
    configs = []
    for text in arguments.config:
        model, _, batch = text.partition(":")
        if model not in PRESETS or not batch.isdigit() or int(batch) < 1:
            parser.error(f"--config '{text}': give MODEL:BATCH with MODEL medium or large and BATCH >= 1")
        configs.append((model, int(batch)))
    if arguments.warmup < 0 or arguments.steps < 1 or arguments.runs < 1:
        parser.error("--warmup >= 0, --steps >= 1 and --runs >= 1")
    arguments.configs = configs
    return arguments


def build_model(widths, dropout):
    layers = []
    for i in range(len(widths) - 1):
        hidden = i < len(widths) - 2
        layers.append(nn.Linear(widths[i], widths[i + 1], bias=hidden))
        if hidden:
            layers += [nn.ReLU(), nn.Dropout(dropout)]
    return nn.Sequential(*layers)


def initialize(model, seed, run):
    """Glorot uniform (Keras' default, as ours), zero biases; from (seed, run); in place, so addresses a graph or DDP
    holds stay valid."""
    generator = torch.Generator(device="cuda").manual_seed(seed * 1_000_003 + run)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                fan_out, fan_in = module.weight.shape
                limit = math.sqrt(6.0 / (fan_in + fan_out))
                module.weight.copy_((torch.rand(module.weight.shape, generator=generator, device="cuda") * 2 - 1)
                                    * limit)
                if module.bias is not None:
                    module.bias.zero_()


class SyntheticData:
    """Features ~ N(0,1), targets tanh(T x / sqrt(inputs)) from a fixed random teacher T ~ N(0,1): docs/measurement.md's
    task. Global batch s is drawn from (seed, s) whole, and rank r takes its contiguous slice, so N ranks see what
    one rank sees."""

    def __init__(self, widths, seed):
        self.inputs, self.outputs, self.seed = widths[0], widths[-1], seed
        teacher_generator = torch.Generator(device="cuda").manual_seed(seed * 7919 + 3)
        self.teacher = torch.randn(self.outputs, self.inputs, generator=teacher_generator, device="cuda")
        self.generator = torch.Generator(device="cuda")

    def put_batch(self, step, global_batch, rank, x, targets):
        self.generator.manual_seed(self.seed * 1_000_003 + 104_729 * step + 17)
        everyone = torch.randn(global_batch, self.inputs, generator=self.generator, device="cuda")
        mine = everyone[rank * x.shape[0]:(rank + 1) * x.shape[0]]
        x.copy_(mine)
        with torch.no_grad():
            targets.copy_(torch.tanh(mine @ self.teacher.t() / math.sqrt(self.inputs)))


class ClockSampler:
    """Mean SM and memory clocks while a run executes (NVML through pynvml when present; else 0 = unknown)."""

    def __init__(self, uuid):
        self.handle = None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByUUID(uuid)
        except Exception:  # no NVML: clocks are recorded as unknown
            self.handle = None
        self.reset()

    def reset(self):
        self.sm, self.memory, self.samples = 0.0, 0.0, 0

    def sample(self):
        if self.handle is None:
            return
        self.sm += self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM)
        self.memory += self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_MEM)
        self.samples += 1

    def means(self):
        return (self.sm / self.samples, self.memory / self.samples) if self.samples else (0.0, 0.0)

    def maxima(self):
        if self.handle is None:
            return 0.0, 0.0
        return (float(self.nvml.nvmlDeviceGetMaxClockInfo(self.handle, self.nvml.NVML_CLOCK_SM)),
                float(self.nvml.nvmlDeviceGetMaxClockInfo(self.handle, self.nvml.NVML_CLOCK_MEM)))

    def driver_cuda_version(self):
        if self.handle is None:
            return "n/a"
        version = self.nvml.nvmlSystemGetCudaDriverVersion()
        return f"{version // 1000}.{version % 1000 // 10}"


def wait_sampling(event, clocks):
    """Poll the run's last event, sampling the clocks while the GPU works (as mgpu_bench does)."""
    while True:
        clocks.sample()
        if event.query():
            return
        time.sleep(0.0002)


class Job:
    """The process's place in the job: rank, world size, its GPU; the process group under torchrun."""

    def __init__(self, mode):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if mode == "graph" and self.world != 1:
            raise SystemExit("torch_mlp: error: --mode graph runs on one GPU: start it without torchrun")
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)
        self.distributed = mode in ("ddp", "graph-dp")
        if self.distributed:
            dist.init_process_group("nccl", rank=self.rank, world_size=self.world, device_id=self.device)

    def gather(self, value):
        if not self.distributed or self.world == 1:
            return [value]
        values = [None] * self.world
        dist.all_gather_object(values, value)
        return values

    def close(self):
        if self.distributed:
            dist.barrier()
            dist.destroy_process_group()


def describe_gpu(job, clocks):
    props = torch.cuda.get_device_properties(job.local_rank)
    uuid = str(getattr(props, "uuid", "n/a"))
    uuid = uuid if uuid.startswith("GPU-") or uuid == "n/a" else "GPU-" + uuid
    bus = getattr(props, "pci_bus_id", None)
    pci = (f"{getattr(props, 'pci_domain_id', 0):04x}:{bus:02x}:{getattr(props, 'pci_device_id', 0):02x}.0"
           if bus is not None else "n/a")
    return {"name": props.name, "uuid": uuid, "pci": pci, "max_clocks": clocks.maxima()}


def peer_topology(job):
    if job.world == 1:
        return "single GPU"
    paths = []
    for other in range(torch.cuda.device_count()):
        if other != job.local_rank:
            access = torch.cuda.can_device_access_peer(job.local_rank, other)
            paths.append(f"device {other}: P2P access {'yes' if access else 'no'} (torch)")
    return "; ".join(paths) or "no other GPU visible"


def make_step(mode, model, optimizer, x, targets, precision):
    """The training step as the framework runs it. Returns (run_step(events), loss tensor getter, reset())."""
    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16")

    def forward_loss():
        with autocast:
            return F.mse_loss(model(x).float(), targets)

    if mode == "ddp":
        holder = {}

        def run_step(events):
            events[0].record()
            loss = forward_loss()
            events[1].record()
            loss.backward()  # DDP's bucketed all-reduces run inside; the stream waits for them before returning
            events[2].record()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            events[3].record()
            holder["loss"] = loss.detach()

        def reset():
            optimizer.state.clear()  # fresh Adam moments (fused Adam creates them at its first step)

        return run_step, lambda: holder["loss"], reset

    # graph, graph-dp: warm up on a side stream (lazy state, cuBLAS workspaces, NCCL's communicator), then capture
    # one whole step.
    parameters = [p for p in model.parameters()]
    flat = torch.empty(sum(p.numel() for p in parameters), device="cuda") if mode == "graph-dp" else None

    def backward_and_reduce(loss):
        loss.backward()  # gradients are written, not accumulated, into fresh buffers (the graph's own when captured)
        if flat is None:
            return
        # graph-dp: one flat buffer (one copy kernel), one all-reduce of it, and Adam reads views of it: the reduced
        # gradient is never copied back. The views are new tensors at capture; the graph keeps their addresses.
        torch.cat([p.grad.reshape(-1) for p in parameters], out=flat)
        dist.all_reduce(flat, op=dist.ReduceOp.AVG)
        offset = 0
        for p in parameters:
            p.grad = flat[offset:offset + p.numel()].view_as(p)
            offset += p.numel()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            optimizer.zero_grad(set_to_none=True)
            backward_and_reduce(forward_loss())
            optimizer.step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=True)
    with torch.cuda.graph(graph):
        static_loss = forward_loss()
        backward_and_reduce(static_loss)
        optimizer.step()

    def run_step(events):
        events[0].record()
        graph.replay()
        events[3].record()

    def reset():
        with torch.no_grad():  # in place: the graph holds these addresses
            for state in optimizer.state.values():
                for value in state.values():
                    if torch.is_tensor(value):
                        value.zero_()

    return run_step, lambda: static_loss.detach(), reset


def run_configuration(job, arguments, model_name, global_batch, output, clocks, gpu, topology):
    widths, dropout = PRESETS[model_name]
    if global_batch % job.world:
        raise SystemExit(f"torch_mlp: error: --config {model_name}:{global_batch}: the global batch must be divisible "
                         f"by the {job.world} ranks")
    local_batch = global_batch // job.world
    steps = arguments.warmup + arguments.steps
    implementation = {"ddp": "pytorch-ddp", "graph": "pytorch-graph", "graph-dp": "pytorch-graph-dp"}[arguments.mode]
    torch.backends.cuda.matmul.allow_tf32 = arguments.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = arguments.precision == "tf32"

    module = build_model(widths, dropout).cuda()
    initialize(module, arguments.seed, 0)
    if arguments.mode == "ddp":
        model = nn.parallel.DistributedDataParallel(module, device_ids=[job.local_rank], bucket_cap_mb=DDP_BUCKET_MB,
                                                    broadcast_buffers=False)
        optimizer = torch.optim.Adam(module.parameters(), fused=True, **ADAM)
    else:
        model = module
        optimizer = torch.optim.Adam(module.parameters(), fused=True, capturable=True, **ADAM)
    data = SyntheticData(widths, arguments.seed)
    x = torch.empty(local_batch, widths[0], device="cuda")
    targets = torch.empty(local_batch, widths[-1], device="cuda")
    data.put_batch(0, global_batch, job.rank, x, targets)
    run_step, current_loss, reset = make_step(arguments.mode, model, optimizer, x, targets, arguments.precision)
    events = [[torch.cuda.Event(enable_timing=True) for _ in range(4)] for _ in range(steps)]
    losses = torch.zeros(steps, device="cuda")

    hosts = job.gather(socket.gethostname())
    gpus = job.gather(gpu)
    topologies = job.gather(topology)
    dense_weights = sum(a * b for a, b in zip(widths[:-1], widths[1:]))
    parameters = sum(p.numel() for p in module.parameters())
    name = f"{model_name}_b{global_batch}_n{job.world}_{implementation}" + \
        ("" if arguments.precision == "fp32" else f"_{arguments.precision}")
    nccl_version = ".".join(str(v) for v in torch.cuda.nccl.version()) if job.distributed else "n/a"
    group = None
    if job.rank == 0:
        group = results_h5.add_configuration(output, name, {
            "implementation": implementation, "model": model_name, "layer_widths": widths, "dropout": dropout,
            "parameter_count": parameters, "dense_weight_count": dense_weights, "global_batch": global_batch,
            "local_batch": local_batch, "batch_mode": "global", "ranks": job.world, "device": "cuda",
            "precision": arguments.precision, "warmup_steps": arguments.warmup, "measured_steps": arguments.steps,
            "runs_requested": arguments.runs, "seed": arguments.seed, "adam_learning_rate": ADAM["lr"],
            "adam_beta1": ADAM["betas"][0], "adam_beta2": ADAM["betas"][1], "adam_epsilon": ADAM["eps"],
            "nccl_algo": os.environ.get("NCCL_ALGO") or "default", "nccl_proto": os.environ.get("NCCL_PROTO") or "default",
            "nccl_environment": sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith("NCCL_")),
            "command_line": " ".join([os.path.basename(sys.executable)] + sys.argv),
            "started_utc": results_h5.utc_now(), "cuda_runtime_version": str(torch.version.cuda),
            "cuda_driver_version": clocks.driver_cuda_version(),
            "cublas_version": f"bundled with torch {torch.__version__}", "nccl_version": nccl_version,
            "mpi_library_version": "n/a (torchrun)" if job.distributed else "n/a",
            "hosts": hosts, "gpu_names": [g["name"] for g in gpus], "gpu_uuids": [g["uuid"] for g in gpus],
            "gpu_pci_bus_ids": [g["pci"] for g in gpus], "peer_topology": topologies,
            "max_sm_clock_mhz": [g["max_clocks"][0] for g in gpus],
            "max_memory_clock_mhz": [g["max_clocks"][1] for g in gpus],
            "graph": "off" if arguments.mode == "ddp" else "on",
            "overlap": "on" if arguments.mode == "ddp" and job.world > 1 else "off",
            # DDP reduces its buckets as backward writes them, last layer first: mgpu_bench's layerwise order.
            "overlap_order": "layerwise" if arguments.mode == "ddp" and job.world > 1 else "n/a",
            # DDP's optimizer steps once every bucket is reduced: mgpu_bench's --overlap-update after-last.
            "overlap_update": "after-last" if arguments.mode == "ddp" and job.world > 1 else "n/a",
            "bucket_mb": DDP_BUCKET_MB if arguments.mode == "ddp" else 0.0, "grad_dtype": "fp32",
            "accumulate_steps": 1, "timing": "events", "environment_preset": "none", "attempt": 1, "trial": 1,
            "fused_optimizer": "off",  # PyTorch's Adam reads a stored gradient: never mgpu_bench's fused optimizer
            "optimizer_sharding": "off",  # DDP and the graph-captured step update every parameter on every rank
            "gemm_tuning": "n/a",  # the framework chooses its GEMMs
            "gemm_choices": "",
            "nccl_max_ctas": 0, "overlap_sm_target": 0,  # DDP's NCCL and the framework's GEMMs as they come
            "step_kernel": "n/a", "step_kernel_chosen": "",  # the framework's kernels
        })
        print(f"# {name}: {implementation}, {parameters:,} parameters, global batch {global_batch} "
              f"({local_batch} per rank), {arguments.warmup} + {arguments.steps} steps, {arguments.runs} runs")
        print(f"#  {'run':>4} {'samples/s':>12} {'step_ms':>9} {'fwd_ms':>9} {'bwd_ms':>9} {'opt_ms':>9} {'loss':>10}")

    for run in range(arguments.runs):
        initialize(module, arguments.seed, run)
        reset()
        clocks.reset()
        for step in range(steps):
            data.put_batch(step, global_batch, job.rank, x, targets)  # before the step's first event
            run_step(events[step])
            losses[step].copy_(current_loss())  # after the step's last event
        wait_sampling(events[-1][3], clocks)
        torch.cuda.synchronize()
        ms = np.array([[e[0].elapsed_time(e[1]) if arguments.mode == "ddp" else math.nan,
                        e[1].elapsed_time(e[2]) if arguments.mode == "ddp" else math.nan,
                        e[2].elapsed_time(e[3]) if arguments.mode == "ddp" else math.nan,
                        e[0].elapsed_time(e[3])] for e in events])
        # Wall span of the measured steps: first measured step's start -> last step's end, gaps included.
        wall = (events[arguments.warmup][0].elapsed_time(events[-1][3]) / arguments.steps if arguments.steps > 0
                else math.nan)
        free, total = torch.cuda.mem_get_info()
        sm, memory = clocks.means()
        if job.world > 1:
            dist.all_reduce(losses, op=dist.ReduceOp.AVG)
        mine = {"ms": ms, "memory": total - free, "sm": sm, "mem": memory, "samples": clocks.samples, "wall": wall}
        everyone = job.gather(mine)
        if job.rank != 0:
            continue
        # One rank reduces nothing (0), except graph-dp's, whose all-reduce runs unmeasured inside the graph (NaN).
        no_comm = 0.0 if job.world == 1 and arguments.mode != "graph-dp" else math.nan
        phase = {
            "forward": [r["ms"][:, 0] for r in everyone], "backward": [r["ms"][:, 1] for r in everyone],
            "allreduce": [np.full(steps, no_comm) for _ in everyone],
            "exposed_comm": [np.full(steps, no_comm) for _ in everyone],
            "optimizer": [r["ms"][:, 2] for r in everyone], "step": [r["ms"][:, 3] for r in everyone],
        }
        results_h5.append_run(group, {k: np.stack(v) for k, v in phase.items()}, losses.cpu().numpy(),
                              [r["memory"] for r in everyone], [r["sm"] for r in everyone],
                              [r["mem"] for r in everyone], [r["samples"] for r in everyone],
                              [r["wall"] for r in everyone])
        step_ms = np.stack(phase["step"]).max(axis=0)[arguments.warmup:]
        mean = lambda p: np.nanmean(np.stack(phase[p]).max(axis=0)[arguments.warmup:])  # noqa: E731
        print(f"   {run:>4} {global_batch * arguments.steps / (step_ms.sum() / 1e3):12.1f} {step_ms.mean():9.4f} "
              f"{mean('forward'):9.4f} {mean('backward'):9.4f} {mean('optimizer'):9.4f} "
              f"{float(losses[-1]):10.6f}", flush=True)
    if group is not None:
        results_h5.finish(group)


def main(argv):
    warnings.filterwarnings("ignore", message="Mean of empty slice")  # a phase the graph does not separate
    arguments = parse_arguments(argv[1:])
    job = Job(arguments.mode)
    output = None
    if job.rank == 0:
        output = results_h5.create(arguments.output, arguments.force, f"torch_mlp.py (torch {torch.__version__})")
    clocks = ClockSampler(describe_gpu_uuid(job))
    gpu = describe_gpu(job, clocks)
    topology = peer_topology(job)
    try:
        for model_name, global_batch in arguments.configs:
            run_configuration(job, arguments, model_name, global_batch, output, clocks, gpu, topology)
    finally:
        if output is not None:
            output.close()
    job.close()
    return 0


def describe_gpu_uuid(job):
    uuid = str(getattr(torch.cuda.get_device_properties(job.local_rank), "uuid", ""))
    return uuid if uuid.startswith("GPU-") else "GPU-" + uuid


if __name__ == "__main__":
    sys.exit(main(sys.argv))
