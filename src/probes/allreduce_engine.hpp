// Purpose: what `mgpu_bench allreduce` needs from a back-end (NCCL on GPUs, MPI_Allreduce on the CPU fallback):
// timed back-to-back all-reduces, each one timed alone, and exact data checks; plus the check's data pattern.
#pragma once

#include <cstddef>
#include <string>

#include "cli/tool_options.hpp"

namespace mgpu {

class AllreduceEngine {
 public:
  virtual ~AllreduceEngine() = default;
  // Collective. `warmup` untimed, then `iterations` back-to-back in-place all-reduces of `elements` between two
  // timestamps on the stream doing the work (host clock on the CPU); returns milliseconds per all-reduce.
  virtual double time_back_to_back(std::size_t elements, int warmup, int iterations) = 0;
  // Collective. The same, each all-reduce between its own two timestamps (as the training step times its
  // reduction); returns the mean milliseconds per all-reduce.
  virtual double time_each(std::size_t elements, int warmup, int iterations) = 0;
  // Collective. Runs the exact data checks on `elements` (output poisoned with NaN first) and returns how many
  // elements of this rank's results were wrong; leaves the timed buffer holding the pattern, not zeros.
  virtual long long check(std::size_t elements) = 0;
  // What is timed and what is checked, for the results' attributes.
  virtual std::string timed_operation() const = 0;
  virtual std::string data_check() const = 0;
};

namespace allreduce_pattern {

// Element i of rank r is a small integer in [-4, 4]: any sum over up to 32 ranks (|sum| <= 128) is exact in fp32 and
// in bf16 (8 significant bits), so the check can demand every bit. Different on every rank and every element.
inline int value(int rank, std::size_t i) { return static_cast<int>((i + 3u * static_cast<unsigned>(rank)) % 9u) - 4; }

// Writes rank's pattern into `out`: `elements` values of `dtype` (bf16 as its 16 bits).
void fill(AllreduceDtype dtype, int rank, std::size_t elements, void* out);

// Elements of `result` that differ from the expected sum over `ranks` ranks of the pattern (average: that sum /
// ranks, exact when ranks is a power of two, else within ranks x 4 units of the format's last place). NaN is wrong.
long long count_wrong(AllreduceDtype dtype, int ranks, std::size_t elements, const void* result, bool average);

}  // namespace allreduce_pattern

}  // namespace mgpu
