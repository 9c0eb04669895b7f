// Purpose: the benchmark's control flow: command line -> agreed back-end -> trainer -> runs -> gather -> results.
#include "benchmark_driver.hpp"

#include <cstdio>
#include <cstdlib>

#include "backend.hpp"
#include "console_report.hpp"
#include "error.hpp"
#include "mpi_check.hpp"
#include "results_file.hpp"
#include "run_conditions.hpp"
#include "run_summary.hpp"

namespace mgpu {
namespace {

// NCCL reads NCCL_ALGO / NCCL_PROTO when the communicator is created, so the options are applied before that.
void apply_nccl_option(const MpiContext& mpi, const char* variable, const std::string& value) {
  if (value.empty()) return;
  const std::string replaced = set_nccl_variable(variable, value);
  if (mpi.rank == 0 && !replaced.empty() && replaced != value) {
    std::printf("# note: the command line sets %s=%s over %s=%s from the environment\n", variable, value.c_str(),
                variable, replaced.c_str());
  }
}

std::string variable_or_default(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : "default";
}

// Gathers every rank's record of one run to rank 0 (others get an empty vector).
std::vector<RunRecord> gather_run(const MpiContext& mpi, const RunRecord& mine) {
  const std::vector<double> packed = mine.pack();
  const int count = static_cast<int>(packed.size());
  std::vector<double> all(mpi.rank == 0 ? packed.size() * mpi.size : 0);
  MGPU_MPI_CHECK(MPI_Gather(packed.data(), count, MPI_DOUBLE, all.data(), count, MPI_DOUBLE, 0, mpi.comm));
  std::vector<RunRecord> per_rank;
  for (int r = 0; mpi.rank == 0 && r < mpi.size; ++r)
    per_rank.push_back(RunRecord::unpack(all.data() + std::size_t(r) * count, mine.total_steps));
  return per_rank;
}

ConfigurationMetadata describe_configuration(const BenchOptions& options, const TrainingSettings& settings,
                                             const BannerFacts& facts) {
  ConfigurationMetadata meta;
  meta.name = (options.model.name == "custom" ? options.model.widths_string() : options.model.name) + "_b" +
              std::to_string(options.global_batch) + "_n" + std::to_string(facts.ranks) + "_" +
              backend_name(facts.backend);
  meta.model = settings.model.name;
  meta.layer_widths.assign(settings.model.widths.begin(), settings.model.widths.end());
  meta.dropout = settings.model.dropout;
  meta.parameter_count = static_cast<std::int64_t>(settings.model.parameter_count());
  meta.dense_weight_count = static_cast<std::int64_t>(settings.model.dense_weight_count());
  meta.global_batch = settings.global_batch;
  meta.local_batch = settings.global_batch / facts.ranks;
  meta.ranks = facts.ranks;
  meta.device = backend_name(facts.backend);
  meta.precision = precision_name(settings.precision);
  meta.graph = settings.graph ? "on" : "off";
  meta.overlap = settings.overlap ? "on" : "off";
  meta.bucket_mb = settings.overlap ? settings.bucket_mb : 0.0;
  meta.timing = timing_name(settings.timing);
  meta.warmup_steps = settings.warmup_steps;
  meta.measured_steps = settings.measured_steps;
  meta.runs_requested = options.runs;
  meta.seed = settings.seed;
  meta.adam_learning_rate = settings.adam.learning_rate;
  meta.adam_beta1 = settings.adam.beta1;
  meta.adam_beta2 = settings.adam.beta2;
  meta.adam_epsilon = settings.adam.epsilon;
  meta.nccl_algo = variable_or_default("NCCL_ALGO");
  meta.nccl_proto = variable_or_default("NCCL_PROTO");
  meta.nccl_environment = facts.nccl_environment;
  meta.command_line = options.command_line;
  meta.cuda_runtime_version = facts.versions.cuda_runtime;
  meta.cuda_driver_version = facts.versions.cuda_driver;
  meta.cublas_version = facts.versions.cublas;
  meta.nccl_version = facts.versions.nccl;
  meta.mpi_library_version = facts.versions.mpi;
  meta.hosts = facts.hosts;
  for (const RankHardware& h : facts.hardware) {
    meta.gpu_names.push_back(h.gpu_name);
    meta.gpu_uuids.push_back(h.gpu_uuid);
    meta.gpu_pci_bus_ids.push_back(h.pci_bus_id);
    meta.peer_topology.push_back(h.peer_topology);
    meta.max_sm_clock_mhz.push_back(h.max_sm_clock_mhz);
    meta.max_memory_clock_mhz.push_back(h.max_memory_clock_mhz);
  }
  return meta;
}

// Every rank learns every rank's hardware (rank 0 prints and records it per rank).
std::vector<RankHardware> gather_hardware(const MpiContext& mpi, const RankHardware& mine) {
  const std::vector<std::string> names = allgather_strings(mpi, mine.gpu_name);
  const std::vector<std::string> uuids = allgather_strings(mpi, mine.gpu_uuid);
  const std::vector<std::string> bus_ids = allgather_strings(mpi, mine.pci_bus_id);
  const std::vector<std::string> topologies = allgather_strings(mpi, mine.peer_topology);
  const std::vector<double> max_sm = allgather_doubles(mpi, mine.max_sm_clock_mhz);
  const std::vector<double> max_memory = allgather_doubles(mpi, mine.max_memory_clock_mhz);
  std::vector<RankHardware> all(names.size());
  for (std::size_t r = 0; r < all.size(); ++r)
    all[r] = RankHardware{names[r], uuids[r], bus_ids[r], topologies[r], max_sm[r], max_memory[r]};
  return all;
}

}  // namespace

void run_benchmark(const BenchOptions& options, const MpiContext& mpi) {
  validate_for_ranks(options, mpi.size);
  const std::string output_path =
      options.output_path.empty() ? options.default_output_path(mpi.size) : options.output_path;

  // Fail before any GPU work if the results could not be written; rank 0 alone writes them.
  std::string output_error;
  if (mpi.rank == 0) {
    try {
      ResultsWriter::check_can_create(output_path, options.force);
    } catch (const UsageError& e) {
      output_error = e.what();
    }
  }
  agree_or_throw(mpi, output_error);

  const BackendChoice choice = choose_backend(options.device, mpi);
  if (mpi.rank == 0 && !choice.notice.empty()) std::printf("#\n# NOTE: %s\n#\n", choice.notice.c_str());
  if (mpi.rank == 0 && choice.backend == Backend::cpu && !(options.nccl_algo + options.nccl_proto).empty()) {
    std::printf("# note: --nccl-algo/--nccl-proto have no effect on the CPU fallback (MPI_Allreduce)\n");
  }
  apply_nccl_option(mpi, "NCCL_ALGO", options.nccl_algo);
  apply_nccl_option(mpi, "NCCL_PROTO", options.nccl_proto);

  TrainingSettings settings;
  settings.model = options.model;
  settings.global_batch = options.global_batch;
  settings.warmup_steps = options.warmup_steps;
  settings.measured_steps = options.measured_steps;
  settings.seed = options.seed;
  // How the step runs (--graph, --overlap, ...): refused here with one line where the back-end cannot honour it.
  // One rank has nothing to overlap, so it is recorded as off.
  apply_step_options(options.step, choice.backend == Backend::cuda, settings);
  settings.overlap = settings.overlap && mpi.size > 1;
  check_memory_fits(choice, settings, mpi);
  const std::unique_ptr<Trainer> trainer = make_trainer(choice, settings, mpi);

  BannerFacts facts;
  facts.options = &options;
  facts.backend = choice.backend;
  facts.ranks = mpi.size;
  facts.versions = library_versions(choice.backend);
  facts.hosts = mpi.hosts;
  facts.hardware = gather_hardware(mpi, describe_rank_hardware(choice, mpi));
  facts.nccl_environment = nccl_environment();
  facts.output_path = output_path;
  facts.settings = &settings;

  // Created only now, after every rank has its trainer, so a failed start leaves no file behind. Rank 0 alone can
  // fail here (another job took the name since the check), so the ranks agree before anyone starts a run.
  std::unique_ptr<ResultsWriter> results;
  ResultsWriter::Configuration configuration;
  std::string creation_error;
  if (mpi.rank == 0) {
    try {
      results = std::make_unique<ResultsWriter>(output_path, options.force);
      configuration = results->add_configuration(describe_configuration(options, settings, facts));
    } catch (const std::exception& e) {
      creation_error = e.what();
    }
  }
  agree_or_throw(mpi, creation_error);
  if (mpi.rank == 0) {
    print_banner(stdout, facts);
    print_run_header(stdout);
  }

  std::vector<RunSummary> summaries;
  for (int run = 0; run < options.runs; ++run) {
    const std::vector<RunRecord> per_rank = gather_run(mpi, trainer->run(run));
    if (mpi.rank != 0) continue;
    summaries.push_back(summarize_run(per_rank, settings.warmup_steps, settings.global_batch));
    results->append_run(configuration, per_rank);  // flushed: the file is valid after every run
    print_run_line(stdout, run, summaries.back());
  }
  if (mpi.rank == 0) {
    results->finish(configuration);
    print_summary(stdout, summaries);
  }
}

}  // namespace mgpu
