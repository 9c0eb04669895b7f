// Purpose: replay_console and recorded_run (console_replay.hpp).
#include "study/console_replay.hpp"

#include <algorithm>
#include <cmath>

#include "platform/error.hpp"
#include "study/backend.hpp"
#include "study/console_report.hpp"
#include "study/rank_facts.hpp"

namespace mgpu {
namespace {

// The banner's facts as the job knew them, from the configuration's attributes.
BannerFacts recorded_banner(const ResultsFile& file, const ConfigurationResults& c, const std::string& path) {
  const ConfigurationMetadata& m = c.metadata;
  BannerFacts facts;
  facts.build = file.root.project_version + " (git " + file.root.git_revision + ")";
  facts.configuration = &m.configuration;
  facts.backend = m.device == "cuda" ? Backend::cuda : Backend::cpu;
  facts.ranks = c.ranks();
  facts.versions = {m.cuda_runtime_version, m.cuda_driver_version, m.cublas_version, m.nccl_version,
                    m.mpi_library_version};
  facts.hosts = m.hosts;
  for (int r = 0; r < c.ranks(); ++r) {
    RankHardware hardware;
    hardware.gpu_name = m.gpu_names.at(r);
    hardware.gpu_uuid = m.gpu_uuids.at(r);
    hardware.pci_bus_id = m.gpu_pci_bus_ids.at(r);
    hardware.peer_topology = m.peer_topology.at(r);
    facts.hardware.push_back(hardware);
  }
  facts.nccl_environment = m.nccl_environment;
  facts.output_path = path;
  facts.environment_preset = m.environment_preset;
  facts.math_check = m.math_check;
  facts.unique_id = m.unique_id_check;
  facts.setup = m.setup;
  return facts;
}

}  // namespace

std::vector<RunRecord> recorded_run(const ConfigurationResults& configuration, int run) {
  const Measurements& data = configuration.measurements;
  const int steps = configuration.steps();
  const int measured_steps = configuration.metadata.training().measured_steps;
  std::vector<RunRecord> per_rank;
  for (int rank = 0; rank < configuration.ranks(); ++rank) {
    RunRecord record(steps);
    for (int p = 0; p < kPhaseCount; ++p)
      for (int step = 0; step < steps; ++step) record.ms(Phase(p), step) = data.phase_ms[p].at(run, rank, step);
    for (int step = 0; step < steps; ++step) record.loss[step] = data.loss.at(run, step);
    // The file keeps the wall span per measured step (NaN in a file before version 3).
    record.measured_wall_ms = data.wall_per_step_ms.at(run, rank) * measured_steps;
    const double marked = data.phases_marked.at(run, rank);
    record.phases_marked = std::isnan(marked) || marked != 0.0;  // a file before version 7 marked every run
    per_rank.push_back(std::move(record));
  }
  return per_rank;
}

void replay_console(std::FILE* out, const std::string& path) {
  const ResultsFile file = read_results_file(path);
  if (file.configurations.empty()) throw UsageError("replay: '" + path + "' holds no configuration");
  const ConfigurationMetadata& job = file.configurations.front().metadata;
  if (!job.job_notice.empty()) print_notice(out, job.job_notice);
  if (!job.job_plan.empty()) print_sweep_plan(out, job.job_plan, path);
  std::vector<SweepTableRow> table;
  int job_ranks = 1;
  for (const ConfigurationResults& c : file.configurations) {
    const TrainingSettings& settings = c.metadata.training();
    print_banner(out, recorded_banner(file, c, path));
    print_run_header(out);
    SweepTableRow row{&c.metadata.configuration, c.metadata.name, {}};
    for (int run = 0; run < c.runs(); ++run) {
      row.runs.push_back(summarize_run(recorded_run(c, run), settings.warmup_steps, settings.global_batch));
      print_run_line(out, run, row.runs.back(), settings.timing == TimingMode::interleaved);
    }
    print_runs_end(out, row.runs.size(), c.metadata.configuration.runs(), c.progress.stopped_early,
                   c.progress.replica_check);
    print_summary(out, row.runs, path);
    table.push_back(std::move(row));
    job_ranks = std::max(job_ranks, c.ranks());
  }
  if (!job.job_plan.empty()) print_sweep_table(out, table);
  print_verdict(out, file, job_ranks);
}

}  // namespace mgpu
