"""Purpose: the floor of one training step (docs/performance.md, "The floor"): a lower bound no implementation beats on
the machine, the largest of bytes / the streaming copy bandwidth, the step's FLOPs / the best GEMM rate measured in
its precision and the fewest kernels x a graph node's cost (with N GPUs also the gradient's all-reduce timed alone),
every rate from `mgpu_bench probe` on the same machine. One definition for bench/performance_table.py and
bench/floor_ab_table.py.
"""
import numpy as np

STREAMING_COPY_BYTES = 64 << 20  # copies at least this large run from device memory, not the L2
# A precision whose GEMMs are several products of another's: tf32x3 runs three TF32 products per GEMM
# (src/train/tf32x3_operands.hpp).
PRODUCTS = {"tf32x3": ("tf32", 3)}


def parameter_count(widths):
    return sum(a * b for a, b in zip(widths[:-1], widths[1:])) + sum(widths[1:-1])


def dense_weights(widths):
    return sum(a * b for a, b in zip(widths[:-1], widths[1:]))


def step_flops(widths, local_batch):
    """The step's GEMM FLOPs: the forward product and the weight gradient of every layer (2 x its weights x the batch
    each) and the input gradient of every layer but the first: the step never forms the gradient with respect to the
    data, so 6 x weights x batch would overstate it by layer 0's share (large: 4.9M of its 6.9M weights)."""
    weights = [a * b for a, b in zip(widths[:-1], widths[1:])]
    return 2.0 * local_batch * (2 * sum(weights) + sum(weights[1:]))


class ProbeRates:
    """The rates of a /probe group (h5py), medians over its runs."""

    def __init__(self, probe):
        copy_bytes = probe["copy_bytes"][()]
        copy_ms = np.median(probe["copy_ms"][()], axis=0)
        gbps = 2 * copy_bytes / (copy_ms * 1e-3) / 1e9  # read + write
        self.copy_gbps = float(gbps[copy_bytes >= STREAMING_COPY_BYTES].max())
        self.gemm_labels = [str(x) for x in probe.attrs["gemm_labels"]]
        self.precisions = [str(x) for x in probe.attrs["gemm_precisions"]]
        self.gemm_ms = np.median(probe["gemm_ms"][()], axis=0)  # [precisions, gemms]
        flops = 2.0 * probe["gemm_shape"][()].prod(axis=1)
        # The best rate any probed GEMM reached (median over runs), the square one included: the highest measured rate
        # gives the lowest, so the safest, FLOP floor.
        self.peak_tflops = {precision: float((flops / (self.gemm_ms[k] * 1e-3)).max() / 1e12)
                            for k, precision in enumerate(self.precisions)}
        for precision, (base, products) in PRODUCTS.items():
            if base in self.peak_tflops:
                self.peak_tflops[precision] = self.peak_tflops[base] / products
        launches = np.median(probe["launch_ms"][()], axis=0)
        self.launch_ms = {str(label): float(v) for label, v in zip(probe.attrs["launch_labels"], launches)}

    def step_gemm_ms(self, model, local_batch, precision):
        """cuBLAS's time of the step's GEMMs at their exact shapes (the probe's '<model> b<batch> ...' rows), summed;
        None where the probe did not time them."""
        base, products = PRODUCTS.get(precision, (precision, 1))
        if base not in self.precisions:
            return None
        prefix, k = f"{model} b{local_batch} ", self.precisions.index(base)
        picked = [self.gemm_ms[k, i] for i, label in enumerate(self.gemm_labels) if label.startswith(prefix)]
        return products * float(sum(picked)) if picked else None


def floor(rates, model, widths, local_batch, ranks, precision="fp32", allreduce_ms=None):
    """(floor ms, which term bounds it, a line of every term) for one step of `ranks` GPUs at `local_batch` samples
    each. bytes: Adam reads p, g, m, v and writes p, m, v (7 x 4P), forward and backward read the weights and backward
    writes the gradient (3 x 4P), the activations about three passes of 4 x B x sum(in + out). flops: step_flops over
    the best rate of the precision. launches: the fewest kernels of a fused step at a graph node's cost, 2L - 1 on one
    GPU (L - 1 forward GEMMs with epilogues, the output head, L - 2 input-gradient GEMMs with epilogues, one
    weight-gradient + Adam kernel), 3L + 1 where the gradient must be written for the all-reduce (L forward GEMMs, the
    loss, L weight- and L - 1 input-gradient GEMMs, one Adam). allreduce_ms (N GPUs): the gradient's all-reduce alone."""
    moved = 40 * parameter_count(widths) + 3 * 4 * local_batch * sum(a + b for a, b in zip(widths[:-1], widths[1:]))
    layers = len(widths) - 1
    kernels = 2 * layers - 1 if ranks == 1 else 3 * layers + 1
    flops = step_flops(widths, local_batch)
    terms = {"bytes": moved / (rates.copy_gbps * 1e9) * 1e3,
             "flops": flops / (rates.peak_tflops[precision] * 1e12) * 1e3,
             "launches": kernels * rates.launch_ms["graph_node"]}
    if allreduce_ms is not None:
        terms["allreduce"] = allreduce_ms
    bound = max(terms, key=terms.get)
    gemm = rates.step_gemm_ms(model, local_batch, precision)
    detail = (f"{moved / 1e6:.0f} MB → {terms['bytes']:.4f}; {flops / 1e9:.2f} GFLOP → {terms['flops']:.4f}" +
              (f" (cuBLAS at these shapes {gemm:.4f})" if gemm is not None else "") +
              f"; {kernels} kernels → {terms['launches']:.4f}" +
              (f"; all-reduce {allreduce_ms:.4f}" if allreduce_ms is not None else ""))
    return terms[bound], bound, detail
