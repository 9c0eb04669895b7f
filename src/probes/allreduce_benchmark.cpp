// Purpose: the all-reduce sweep's control flow: output check, back-end, engine, per size (check, runs, gather to
// rank 0, one console line), then the /allreduce group; docs/measurement.md's algbw/busbw from the max over ranks.
#include "probes/allreduce_benchmark.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "comm/run_conditions.hpp"
#include "comm/watchdog.hpp"
#include "platform/error.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/mpi_check.hpp"
#include "platform/sample_median.hpp"
#include "probes/mpi_allreduce_engine.hpp"
#include "probes/standalone_conditions.hpp"
#include "probes/sweep_placement.hpp"
#include "results/results_reader.hpp"
#include "results/results_writer.hpp"
#include "study/backend.hpp"

#if MGPU_HAVE_CUDA
#include "probes/nccl_allreduce_engine.hpp"
#endif

namespace mgpu {
namespace {

std::unique_ptr<AllreduceEngine> make_engine(const BackendChoice& choice, const MpiContext& mpi,
                                             const AllreduceOptions& options, std::size_t max_elements) {
#if MGPU_HAVE_CUDA
  if (choice.backend == Backend::cuda)
    return make_nccl_allreduce_engine(mpi, choice.device_ordinal, options.dtype, max_elements, options.iterations);
#endif
  (void)options;  // the CPU engine is fp32 only (bf16 is refused before) and needs no iteration count
  MGPU_REQUIRE(choice.backend == Backend::cpu, "this build has no CUDA support");
  return make_mpi_allreduce_engine(mpi, max_elements);
}

void print_header(std::FILE* out, const AllreduceOptions& options) {
  std::fprintf(out,
               "# %d runs of %d back-to-back all-reduces (after %d untimed) per size; time = median over runs of "
               "the max over ranks\n",
               options.runs, options.iterations, options.warmup_iterations);
  std::fprintf(out, "# %12s %12s %5s  %-29s  %-29s %8s  %s\n", "", "", "", "      back-to-back (nccl-tests)",
               "       one at a time", "", "");
  std::fprintf(out, "# %12s %12s %5s  %9s %9s %9s  %9s %9s %9s %8s  %s\n", "size(B)", "count", "type", "time(us)",
               "algbw", "busbw", "time(us)", "algbw", "busbw", "#wrong", "");
  std::fprintf(out, "# %12s %12s %5s  %9s %9s %9s  %9s %9s %9s %8s\n", "", "(elements)", "", "", "(GB/s)", "(GB/s)", "",
               "(GB/s)", "(GB/s)", "");
}

// Fails before any GPU work if the results could not be written; rank 0 alone writes them, every rank learns.
void check_output(const AllreduceOptions& options, const MpiContext& mpi) {
  std::string output_error;
  if (mpi.rank == 0) {
    try {
      check_can_add_group(options.output_path, results_schema::kAllreduceGroup, options.force);
    } catch (const UsageError& e) {
      output_error = e.what();
    }
  }
  agree_or_throw(mpi, output_error);
}

// Nodes and GPUs per node from the hosts, the adapters from NCCL's topology (none reported on the CPU fallback).
void record_placement(results_schema::AllreduceSweep& sweep, const MpiContext& mpi, const BackendChoice& choice,
                      const TopologyNics& nics) {
  const SweepPlacement placement = placement_of(mpi.hosts);
  sweep.nodes = placement.nodes;
  sweep.gpus_per_node = placement.gpus_per_node;
  sweep.nics_per_node = nics.count;
  sweep.network =
      choice.backend == Backend::cpu ? "MPI_Allreduce (CPU fallback): no network adapter reported" : nics.description;
}

// The /allreduce group's record before any size is measured: conditions, placement, settings and arrays of the
// right shapes.
results_schema::AllreduceSweep empty_sweep(const AllreduceOptions& options, const AllreduceEngine& engine,
                                           const BackendChoice& choice, const MpiContext& mpi, std::size_t count,
                                           const TopologyNics& nics) {
  results_schema::AllreduceSweep sweep;
  sweep.conditions = describe_standalone_conditions(choice, mpi, options.command_line);
  record_placement(sweep, mpi, choice, nics);
  sweep.conditions.started_utc = utc_timestamp_now();
  sweep.dtype = setting_name(options.dtype);
  sweep.timed_operation = engine.timed_operation();
  sweep.data_check = engine.data_check();
  sweep.iterations = options.iterations;
  sweep.warmup_iterations = options.warmup_iterations;
  sweep.runs = options.runs;
  const std::size_t runs = static_cast<std::size_t>(options.runs);
  const std::size_t ranks = static_cast<std::size_t>(mpi.size);
  sweep.bytes.shape = sweep.elements.shape = sweep.wrong_elements.shape = {count};
  sweep.time_ms.shape = sweep.op_ms.shape = {runs, ranks, count};
  sweep.algbw_gbps.shape = sweep.busbw_gbps.shape = {runs, count};
  sweep.time_ms.values.assign(runs * ranks * count, 0.0);
  sweep.op_ms.values.assign(runs * ranks * count, 0.0);
  sweep.algbw_gbps.values.assign(runs * count, 0.0);
  sweep.busbw_gbps.values.assign(runs * count, 0.0);
  return sweep;
}

// Every rank's times of one size, gathered per run (batched: back to back; each: one at a time, rank-major), into
// the record, and its console line. Rank 0.
struct SizeTimes {
  std::vector<double> batched;
  std::vector<double> each;
};
void record_size(results_schema::AllreduceSweep& sweep, std::size_t s, const SweepSize& size, std::size_t elements,
                 long long wrong, const SizeTimes& all, int ranks_in_job) {
  const std::size_t count = sweep.bytes.shape[0];
  const std::size_t runs = static_cast<std::size_t>(sweep.runs);
  const std::size_t ranks = static_cast<std::size_t>(ranks_in_job);
  sweep.size_labels.push_back(size.label);
  sweep.bytes.values.push_back(size.bytes);
  sweep.elements.values.push_back(static_cast<std::int64_t>(elements));
  sweep.wrong_elements.values.push_back(wrong);
  // docs/measurement.md: a collective takes as long as its slowest rank.
  std::vector<double> slowest_batched(runs, 0.0), slowest_each(runs, 0.0);
  for (std::size_t run = 0; run < runs; ++run) {
    for (std::size_t r = 0; r < ranks; ++r) {
      const double b = all.batched[r * runs + run], e = all.each[r * runs + run];
      sweep.time_ms.values[(run * ranks + r) * count + s] = b;
      sweep.op_ms.values[(run * ranks + r) * count + s] = e;
      slowest_batched[run] = std::max(slowest_batched[run], b);
      slowest_each[run] = std::max(slowest_each[run], e);
    }
    const double algbw = algorithm_bandwidth_gbps(double(size.bytes), slowest_batched[run]);
    sweep.algbw_gbps.values[run * count + s] = algbw;
    sweep.busbw_gbps.values[run * count + s] = bus_bandwidth_gbps(algbw, ranks_in_job);
  }
  const double t = median(slowest_batched), t1 = median(slowest_each);
  const double algbw = algorithm_bandwidth_gbps(double(size.bytes), t);
  const double algbw1 = algorithm_bandwidth_gbps(double(size.bytes), t1);
  std::printf("  %12lld %12zu %5s  %9.2f %9.2f %9.2f  %9.2f %9.2f %9.2f %8lld  %s\n",
              static_cast<long long>(size.bytes), elements, sweep.dtype.c_str(), t * 1e3, algbw,
              bus_bandwidth_gbps(algbw, ranks_in_job), t1 * 1e3, algbw1, bus_bandwidth_gbps(algbw1, ranks_in_job),
              wrong, size.label.c_str());
  std::fflush(stdout);
}

// Rank 0 writes the group; every rank learns whether it could, then whether the data check failed.
void write_sweep(const AllreduceOptions& options, results_schema::AllreduceSweep& sweep, long long total_wrong,
                 const MpiContext& mpi) {
  sweep.data_check_passed = total_wrong == 0 ? 1 : 0;
  std::string write_error;
  if (mpi.rank == 0) {
    try {
      write_allreduce_sweep(options.output_path, sweep, options.force);
      std::printf("#\n# data check: %s; results: /%s in %s\n", total_wrong == 0 ? "every element right" : "FAILED",
                  results_schema::kAllreduceGroup, options.output_path.c_str());
    } catch (const std::exception& e) {
      write_error = e.what();
    }
  }
  agree_or_throw(mpi, write_error);
  if (total_wrong != 0)
    throw UsageError("all-reduce data check failed: " + std::to_string(total_wrong) +
                     " wrong elements (per size in /allreduce/wrong_elements of " + options.output_path + ")");
}

}  // namespace

double algorithm_bandwidth_gbps(double bytes, double milliseconds) { return bytes / (milliseconds * 1e-3) / 1e9; }
double bus_bandwidth_gbps(double algbw_gbps, int ranks) { return algbw_gbps * 2.0 * (ranks - 1) / ranks; }

void run_allreduce_benchmark(const AllreduceOptions& options, const MpiContext& mpi) {
  check_output(options, mpi);
  watchdog::set_timeout_option(options.timeout_seconds);
  const BackendChoice choice = choose_backend(options.device, mpi);
  if (mpi.rank == 0 && !choice.notice.empty()) std::printf("#\n# NOTE: %s\n#\n", choice.notice.c_str());
  if (choice.backend == Backend::cpu && options.dtype == AllreduceDtype::bf16)
    throw UsageError("--dtype bf16: the CPU fallback (MPI_Allreduce) has no bf16; use --dtype fp32 or GPUs");
  apply_nccl_options(mpi.rank, choice.backend == Backend::cpu, options.nccl_algo, options.nccl_proto);

  const std::vector<SweepSize> sizes = options.sizes();
  const std::size_t element_bytes = allreduce_dtype_bytes(options.dtype);
  const std::size_t max_elements = static_cast<std::size_t>(sizes.back().bytes) / element_bytes;
  // Rank 0 on GPUs has NCCL dump its topology as the communicator starts: the node's adapters, as NCCL sees them.
  std::optional<NcclTopologyDump> topology;
  if (choice.backend == Backend::cuda && mpi.rank == 0) topology.emplace();
  const std::unique_ptr<AllreduceEngine> engine = make_engine(choice, mpi, options, max_elements);
  if (topology) topology->release_variable();
  results_schema::AllreduceSweep sweep =
      empty_sweep(options, *engine, choice, mpi, sizes.size(), topology ? topology->nics() : TopologyNics{});
  if (mpi.rank == 0) {
    print_standalone_banner(stdout, "allreduce", sweep.conditions, options.output_path);
    std::printf("# placement: %d node(s), at most %d rank(s) on one; network: %s\n", sweep.nodes, sweep.gpus_per_node,
                sweep.network.empty() ? "not reported" : sweep.network.c_str());
    std::printf("# operation timed: %s\n# data check: %s\n", sweep.timed_operation.c_str(), sweep.data_check.c_str());
    print_header(stdout, options);
  }

  long long total_wrong = 0;
  const std::size_t runs = static_cast<std::size_t>(options.runs);
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    // A test hook: a rank stopped before size s (R:s), so that the others' wait on it meets the watchdog.
    stop_here_if_asked("MGPU_FAULT_STOP_BEFORE_ALLREDUCE_SIZE", mpi.rank, static_cast<long>(s));
    const std::size_t elements = static_cast<std::size_t>(sizes[s].bytes) / element_bytes;
    // Every rank checks its own result; the count over ranks is what is recorded.
    const long long mine_wrong = engine->check(elements);
    const long long wrong = allreduce_value(mpi, mine_wrong, MPI_SUM, "every rank's count of wrong elements");
    total_wrong += wrong;
    std::vector<double> batched(runs), each(runs);
    for (std::size_t run = 0; run < runs; ++run) {
      batched[run] = engine->time_back_to_back(elements, options.warmup_iterations, options.iterations);
      each[run] = engine->time_each(elements, options.warmup_iterations, options.iterations);
    }
    const SizeTimes all{gather_doubles_to_root(mpi, batched), gather_doubles_to_root(mpi, each)};
    if (mpi.rank == 0) record_size(sweep, s, sizes[s], elements, wrong, all, mpi.size);
  }
  write_sweep(options, sweep, total_wrong, mpi);
}

}  // namespace mgpu
