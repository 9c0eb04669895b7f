// Purpose: the benchmark's control flow: command line -> sweep plan -> agreed back-end -> results file (new or
// resumed) -> per configuration: its ranks' communicators -> trainer -> runs -> gather -> results.
#include "study/benchmark_driver.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "comm/replica_check.hpp"
#include "comm/run_conditions.hpp"
#include "comm/startup_deadline.hpp"
#include "comm/watchdog.hpp"
#include "platform/error.hpp"
#include "platform/fault_hooks.hpp"
#include "platform/mpi_check.hpp"
#include "platform/shutdown_signals.hpp"
#include "platform/wall_clock.hpp"
#include "results/configuration_identity.hpp"
#include "results/configuration_record.hpp"
#include "results/results_reader.hpp"
#include "results/results_writer.hpp"
#include "stats/run_checks.hpp"
#include "stats/verdict.hpp"
#include "study/adaptive_trials.hpp"
#include "study/backend.hpp"
#include "study/console_report.hpp"
#include "study/gemm_plan_attachment.hpp"
#include "study/math_check_agreement.hpp"
#include "study/rank_facts.hpp"
#include "study/resumed_file.hpp"
#include "study/run_stopping.hpp"
#include "study/run_summary.hpp"
#include "study/stop_recorder.hpp"
#include "study/sweep_plan.hpp"
#include "study/sweep_progress.hpp"
#include "study/trial_stopping.hpp"
#include "train/math_check.hpp"

namespace mgpu {
namespace {

// Gathers every rank's record of one run to rank 0 (others get an empty vector).
std::vector<RunRecord> gather_run(const MpiContext& mpi, const RunRecord& mine) {
  const std::vector<double> packed = mine.pack();
  const std::vector<double> all = gather_doubles_to_root(mpi, packed);
  std::vector<RunRecord> per_rank;
  for (int r = 0; mpi.rank == 0 && r < mpi.size; ++r)
    per_rank.push_back(RunRecord::unpack(all.data() + std::size_t(r) * packed.size(), mine.total_steps));
  return per_rank;
}

// Facts of the whole job, the same for every configuration.
struct JobFacts {
  BackendChoice choice;
  LibraryVersions versions;
  std::vector<std::string> nccl_environment;
  std::string environment_preset;
  std::string command_line;
  std::string output_path;
  std::string plan;  // sweep_plan_text of a job of several configurations, else ""
};

// What a configuration's group records. `hardware` and `hosts`: one entry per participating rank, in rank order.
ConfigurationMetadata describe_configuration(const Configuration& configuration, const JobFacts& job,
                                             const std::vector<std::string>& hosts,
                                             const std::vector<RankHardware>& hardware) {
  ConfigurationMetadata meta;
  record_configuration(configuration, backend_name(job.choice.backend), meta);
  meta.implementation = results_schema::kImplementation;
  meta.environment_preset = job.environment_preset;
  meta.nccl_environment = job.nccl_environment;
  meta.command_line = job.command_line;
  meta.job_notice = job.choice.notice;
  meta.job_plan = job.plan;
  record_ranks_and_libraries(meta, job.versions, hosts, hardware, configuration.gpus);
  for (int r = 0; r < configuration.gpus; ++r) {
    meta.max_sm_clock_mhz.push_back(hardware[r].max_sm_clock_mhz);
    meta.max_memory_clock_mhz.push_back(hardware[r].max_memory_clock_mhz);
  }
  return meta;
}

// What rank 0 decided for each planned configuration before the sweep starts (--resume: run it, skip it as complete,
// or replace its incomplete group).
enum class ResumeAction : int { run = 0, skip = 1, replace = 2 };

struct SweepState {
  std::unique_ptr<ResultsWriter> results;  // rank 0 only
  std::vector<int> actions;                // ResumeAction per configuration, every rank
  std::vector<int> attempts;               // attempt number each configuration gets when it runs, every rank
};

// Rank 0: creates the results file, or with --resume opens it (`resumed`, read by read_resumed_file) and matches each
// planned configuration against the file's group of the same name by identity: complete -> skip, incomplete ->
// replace (its group is rerun), absent -> run. A same-named group that measures something else, or a file of another
// schema version, is refused.
SweepState open_results(const BenchOptions& options, const std::vector<Configuration>& plan, const JobFacts& job,
                        const MpiContext& mpi, const std::vector<RankHardware>& job_hardware,
                        const std::optional<ResultsFile>& resumed) {
  SweepState state;
  state.actions.assign(plan.size(), int(ResumeAction::run));
  state.attempts.assign(plan.size(), 1);
  std::string error;
  if (mpi.rank == 0) {
    try {
      if (resumed) {
        const ResultsFile& existing = *resumed;
        if (existing.root.schema_version != results_schema::kVersion)
          throw UsageError("--resume: '" + job.output_path + "' has schema_version " +
                           std::to_string(existing.root.schema_version) + ", this build writes " +
                           std::to_string(results_schema::kVersion) + "; resume into a file of this build's version");
        for (std::size_t i = 0; i < plan.size(); ++i) {
          const ConfigurationMetadata planned = describe_configuration(plan[i], job, mpi.hosts, job_hardware);
          for (const ConfigurationResults& stored : existing.configurations) {
            if (stored.metadata.name != planned.name) continue;
            const std::string difference = identity_difference(planned, stored.metadata);
            if (!difference.empty())
              throw UsageError("--resume: '" + job.output_path + "': configuration '" + planned.name +
                               "': " + difference + "; give another --output");
            state.actions[i] = int(stored.progress.complete ? ResumeAction::skip : ResumeAction::replace);
            state.attempts[i] = stored.metadata.attempt + (stored.progress.complete ? 0 : 1);
          }
        }
        state.results = std::make_unique<ResultsWriter>(ResultsWriter::open_for_resume(job.output_path));
      } else {
        state.results = std::make_unique<ResultsWriter>(job.output_path, options.force);
      }
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  agree_or_throw(mpi, error);
  broadcast_from_root(mpi, state.actions, "rank 0's plan of what the results file already holds");
  broadcast_from_root(mpi, state.attempts, "rank 0's attempt numbers of the results file");
  return state;
}

// Rank 0 creates the configuration's group only now, after every rank has its trainer and its math check, so that a
// failed start leaves no group behind; a group whose math check failed keeps the check and no run, marked interrupted
// with the reason (--resume reruns it). Rank 0 alone can fail here, so the ranks agree before anyone goes on, and a
// failed math check then ends the configuration on every rank.
ResultsWriter::Configuration create_group(const Configuration& configuration, const JobFacts& job,
                                          const BannerFacts& facts, const Trainer& trainer, const MathCheckRecord& math,
                                          ResumeAction action, int attempt, ResultsWriter* results,
                                          const MpiContext& sub) {
  ResultsWriter::Configuration group;
  std::string creation_error;
  if (sub.rank == 0) {
    try {
      ConfigurationMetadata metadata = describe_configuration(configuration, job, facts.hosts, facts.hardware);
      metadata.attempt = attempt;
      metadata.gemm_choices = trainer.gemm_choices();  // rank 0's, made when its trainer was set up
      metadata.step_kernel_chosen = trainer.step_kernel_chosen();
      metadata.gemm_candidates_checked = trainer.gemm_candidates_checked();
      metadata.gemm_candidates_rejected = trainer.gemm_candidates_rejected();
      record_math_check(metadata, math);
      metadata.setup = facts.setup;
      metadata.unique_id_check = facts.unique_id;
      if (action == ResumeAction::replace) results->remove_configuration(metadata.name);
      group = results->add_configuration(metadata);
      if (!math.passed) results->mark_interrupted(group, math.refusal);
    } catch (const std::exception& e) {
      creation_error = e.what();
    }
  }
  agree_or_throw(sub, creation_error);
  if (!math.passed) throw UsageError(math.refusal);
  return group;
}

// What the runs of a configuration gave rank 0: each run's summary, and why they ended before the planned number
// ("" when they did not).
struct MeasuredRuns {
  std::vector<RunSummary> summaries;
  std::string stopped_early;
};

// The configuration's runs, each gathered to rank 0, appended to the file (flushed: the file is valid after every
// run) and printed; they end early where the stopping rule says so (run_stopping.hpp): rank 0 decides, having every
// rank's times, and every rank follows, outside any run. Collective over `sub`.
MeasuredRuns measure_runs(const Configuration& configuration, const MpiContext& sub, Trainer& trainer,
                          ResultsWriter* results, ResultsWriter::Configuration& group, SweepProgress* progress,
                          const std::vector<RankHardware>& hardware) {
  MeasuredRuns measured;
  const TrainingSettings& settings = configuration.training;
  const bool interleaved = settings.timing == TimingMode::interleaved;
  const StopRule stop_rule{configuration.max_noise_percent, configuration.max_time_seconds, interleaved};
  const bool may_stop_early = stop_rule.max_noise_percent > 0 || stop_rule.max_time_seconds > 0;
  const auto runs_start = std::chrono::steady_clock::now();
  for (int run = 0; run < configuration.runs(); ++run) {
    watchdog::set_run(run);
    // Before a run starts is where a signal that arrived during rank 0's writing is acted on (watchdog.hpp).
    watchdog::stop_if_signalled();
    const auto run_start = std::chrono::steady_clock::now();
    if (run == 0) startup_deadline::begin("the first run");
    // Fault injection (docs/reliability.md): MGPU_FAULT_STOP_IN_RUN=R:K stops rank R as its K-th run starts.
    stop_here_if_asked("MGPU_FAULT_STOP_IN_RUN", sub.rank);
    std::vector<RunRecord> per_rank = gather_run(sub, trainer.run(run));
    // Set-up is over: from here every wait of the configuration bounds itself (watchdog.hpp).
    if (run == 0) startup_deadline::finished();
    watchdog::record_run_seconds(seconds_since(run_start));
    if (sub.rank == 0) {
      measured.summaries.push_back(summarize_run(per_rank, settings.warmup_steps, settings.global_batch));
      for (std::size_t r = 0; r < per_rank.size(); ++r)
        per_rank[r].throttled = stats::is_throttled(per_rank[r].sm_clock_mhz, hardware[r].max_sm_clock_mhz);
      // A failure here is rank 0's alone (a full disk) while the others already wait in the next run: the watchdog
      // stops them all, the configuration marked with the reason.
      try {
        results->append_run(group, per_rank);
      } catch (const Error& e) {
        watchdog::stop_for_error(e.what());
      }
      progress->clear();
      print_run_line(stdout, run, measured.summaries.back(), interleaved);
      progress->finish_run();
    }
    if (!may_stop_early || run + 1 == configuration.runs()) continue;
    if (sub.rank == 0) {
      const double seconds = seconds_since(runs_start);
      measured.stopped_early = stop_reason(stop_rule, measured.summaries, seconds);
    }
    if (allgather_doubles(sub, measured.stopped_early.empty() ? 0.0 : 1.0)[0] == 0.0) continue;
    if (sub.rank == 0) progress->drop_runs(configuration.runs() - run - 1);
    break;
  }
  watchdog::set_run(-1);
  return measured;
}

// After the runs the replicas must still be one model (bit-identical parameters). Every rank knows the answer, so a
// difference ends the job on all of them together: the configuration stays incomplete (--resume reruns it), marked
// interrupted with the reason, and the job exits non-zero with that one line. Otherwise rank 0 marks the
// configuration complete and prints its summary.
void finish_configuration(const std::string& name, const MpiContext& sub, const Trainer& trainer,
                          const MeasuredRuns& measured, int planned_runs, const std::string& output_path,
                          ResultsWriter* results, ResultsWriter::Configuration& group, SweepProgress* progress,
                          StopRecorder* stop_recorder) {
  const ReplicaCheck replicas = check_replicas(sub, trainer.parameters());
  if (sub.rank == 0) results->record_replica_check(group, replicas.text);
  if (!replicas.identical) {
    const std::string reason = name + ": the data-parallel replicas diverged after its runs: " + replicas.text;
    if (sub.rank == 0) {
      results->mark_interrupted(group, reason);
      stop_recorder->set_current(nullptr);
    }
    throw UsageError(reason);
  }
  if (sub.rank != 0) return;
  results->finish(group, measured.stopped_early);
  stop_recorder->set_current(nullptr);
  progress->clear();
  print_runs_end(stdout, measured.summaries.size(), planned_runs, measured.stopped_early, replicas.text);
  print_summary(stdout, measured.summaries, output_path);
  progress->finish_configuration();
}

// Where the job keeps its results, reports its progress, keeps the math check's last reference and its GEMM tunings.
struct SweepRun {
  SweepState state;
  StopRecorder* stop_recorder;
  SweepProgress* progress;
  ReferenceRuns references;
  GemmTunings gemm_tunings;  // cleared between configurations: each tunes its own
};

// One configuration on the ranks of `sub` (the first configuration.gpus ranks of the job); collective over them:
// trainer (set-up, tuning), math check, group, runs, replica check. Returns rank 0's run summaries.
std::vector<RunSummary> run_configuration(const Configuration& configuration, const JobFacts& job,
                                          const MpiContext& sub, ResumeAction action, int attempt, SweepRun& sweep) {
  ResultsWriter* results = sweep.state.results.get();
  SweepProgress* progress = sweep.progress;
  StopRecorder* stop_recorder = sweep.stop_recorder;
  const TrainingSettings& settings = configuration.training;
  const std::string name = configuration.name(backend_name(job.choice.backend));
  watchdog::set_configuration(name);
  // A trainer per configuration, on this configuration's communicator: NCCL's is created over exactly these ranks.
  const auto setup_start = std::chrono::steady_clock::now();
  const std::unique_ptr<Trainer> trainer = make_trainer(job.choice, settings, sub, sweep.gemm_tunings);
  const double setup_seconds = seconds_since(setup_start);
  const MathCheckRecord math = check_configuration_math(*trainer, settings, sub, name, sweep.references);
  BannerFacts facts;
  facts.build = build_text();
  facts.configuration = &configuration;
  facts.backend = job.choice.backend;
  facts.ranks = sub.size;
  facts.versions = job.versions;
  facts.hosts = sub.hosts;
  facts.hardware = gather_rank_hardware(sub, describe_rank_hardware(job.choice, sub));
  facts.nccl_environment = job.nccl_environment;
  facts.output_path = job.output_path;
  facts.environment_preset = job.environment_preset;
  facts.math_check = math.text;
  facts.unique_id = trainer->unique_id_check();
  facts.setup = setup_text(setup_seconds, trainer->gemm_candidates_checked(), trainer->gemm_candidates_rejected(),
                           trainer->gemm_verification_seconds());

  ResultsWriter::Configuration group =
      create_group(configuration, job, facts, *trainer, math, action, attempt, results, sub);
  if (sub.rank == 0) {
    stop_recorder->set_current(&group);
    progress->start_configuration(group.name(), configuration.runs());
    progress->clear();
    print_banner(stdout, facts);
    print_run_header(stdout);
    progress->redraw();
  }
  const MeasuredRuns measured = measure_runs(configuration, sub, *trainer, results, group, progress, facts.hardware);
  finish_configuration(name, sub, *trainer, measured, configuration.runs(), job.output_path, results, group, progress,
                       stop_recorder);
  return measured.summaries;
}

// Fails before any GPU work if the results could not be written; rank 0 alone writes them, every rank learns.
void check_output_writable(const BenchOptions& options, const std::string& path, const MpiContext& mpi) {
  std::string output_error;
  if (mpi.rank == 0) {
    try {
      if (options.resume)
        ResultsWriter::check_can_resume(path);
      else
        ResultsWriter::check_can_create(path, options.force);
    } catch (const UsageError& e) {
      output_error = e.what();
    }
  }
  agree_or_throw(mpi, output_error);
}

// What every configuration of the job shares, once every rank agreed that the job can run: the results can be
// written and the back-end is chosen. How each step runs (--graph, --overlap, ...) and how many trials a batch takes
// depend on the back-end; the CPU fallback refuses with one line what it cannot honour (resolve_step), and the
// same on every rank.
JobFacts prepare_job(const BenchOptions& options, const MpiContext& mpi) {
  JobFacts job;
  job.command_line = options.command_line;
  job.output_path = options.output_path.empty() ? options.default_output_path(mpi.size) : options.output_path;
  check_output_writable(options, job.output_path, mpi);
  job.choice = choose_backend(options.device, mpi);
  if (mpi.rank == 0 && !job.choice.notice.empty()) print_notice(stdout, job.choice.notice);
  apply_nccl_options(mpi.rank, job.choice.backend == Backend::cpu, options.settings.nccl_algo,
                     options.settings.nccl_proto);
  job.versions = library_versions(job.choice.backend);
  job.nccl_environment = nccl_environment();
  job.environment_preset = environment_preset();
  return job;
}

// Every configuration fits before the first starts, so that a long sweep does not fail half-way.
void check_plan_fits(const JobFacts& job, const std::vector<Configuration>& plan, const MpiContext& mpi) {
  for (const Configuration& configuration : plan)
    check_memory_fits(job.choice, configuration.training, configuration.gpus, mpi);
}

// Plan entry i: skipped where --resume found it complete, else run by its ranks while the others wait.
SweepTableRow run_plan_entry(const std::vector<Configuration>& plan, std::size_t i, const JobFacts& job,
                             const MpiContext& mpi, SweepRun& sweep) {
  const Configuration& configuration = plan[i];
  const ResumeAction action = ResumeAction(sweep.state.actions[i]);
  SweepTableRow row{&configuration, configuration.name(backend_name(job.choice.backend)), {}};
  if (action == ResumeAction::skip) {
    if (mpi.rank == 0) {
      sweep.progress->clear();
      std::printf("# %s: complete in %s, skipped (--resume)\n", row.name.c_str(), job.output_path.c_str());
      sweep.progress->skip(configuration.runs());
    }
    return row;
  }
  // The configuration's ranks run it through communicators of their own; the others sleep at the barrier. A bad
  // input seen by the participants (they agree on it among themselves) reaches every rank through the agreement
  // over the whole job that follows, so nobody waits forever. Every rank first meets the others in a bounded
  // barrier: MPI_Comm_split has no non-blocking form, and a rank that never arrives must end the job, not hang it.
  watchdog::set_configuration(row.name);
  startup_deadline::begin("the set-up of configuration '" + row.name + "'");
  // Fault injection (docs/reliability.md): MGPU_FAULT_STOP_BEFORE_CONFIGURATION=R:K stops rank R before the
  // sweep's configuration K (from 0), so that a test sees the others end the job at set-up.
  stop_here_if_asked("MGPU_FAULT_STOP_BEFORE_CONFIGURATION", mpi.rank, static_cast<long>(i));
  barrier(mpi, "every rank, to start configuration '" + row.name + "'", true);
  const bool member = mpi.rank < configuration.gpus;
  std::string error;
  {
    const FirstRanksCommunicator communicator(mpi, configuration.gpus);
    if (communicator.member()) {
      try {
        const MpiContext sub = describe_mpi_job(communicator.get());
        row.runs = run_configuration(configuration, job, sub, action, sweep.state.attempts[i], sweep);
      } catch (const UsageError& e) {
        error = e.what();
      }
    }
  }
  // The trainer is gone (run_configuration returned): the next configuration starts on a fresh CUDA context.
  if (device_reset_follows(i, plan.size())) reset_device_between_configurations(job.choice, sweep.gemm_tunings);
  // Bounded for the configuration's own ranks, which finish it together; the others waited for it unbounded.
  barrier(mpi, "the other ranks to finish configuration '" + row.name + "'", member);
  agree_or_throw(mpi, error, "after configuration '" + row.name + "'");
  return row;
}

}  // namespace

void run_benchmark(const BenchOptions& given, const MpiContext& mpi) {
  startup_deadline::begin("the job's set-up (devices, results file)");
  validate_for_ranks(given, mpi.size);  // a bad grid is refused before anything else happens, once
  // From here on SIGTERM/SIGINT and stalls end the job through the watchdog, which keeps the completed runs.
  install_shutdown_signal_handlers();
  watchdog::set_timeout_option(given.timeout_seconds);
  JobFacts job = prepare_job(given, mpi);
  const std::optional<ResultsFile> resumed = read_resumed_file(given, job.output_path, mpi);
  const int resumed_trials = given.resume && !given.trials_given ? trials_in_resumed_file(resumed, mpi) : 1;
  BenchOptions options = with_default_trials(given, job.choice.backend == Backend::cuda, mpi.size, resumed_trials);
  // NCCL's choices as in effect (the options', else the environment's): what every configuration records.
  options.settings.nccl_algo = nccl_variable_or_default("NCCL_ALGO");
  options.settings.nccl_proto = nccl_variable_or_default("NCCL_PROTO");
  std::vector<Configuration> plan = plan_sweep(options, mpi.size, job.choice.backend == Backend::cuda);
  check_plan_fits(job, plan, mpi);
  // Every rank's hardware, for matching a resumed file's configurations (their GPU models must be the same).
  const std::vector<RankHardware> job_hardware = gather_rank_hardware(mpi, describe_rank_hardware(job.choice, mpi));
  if (!options.gemm_plan_path.empty())
    attach_gemm_plans(plan, options.gemm_plan_path, job.choice, job.versions, job_hardware, mpi);
  long long total_runs = 0;
  for (const Configuration& configuration : plan) total_runs += configuration.runs();
  if (plan.size() > 1) job.plan = sweep_plan_text(options.adaptive_trials, plan.size(), total_runs);
  // Rank 0, the one that writes the file, read it where --resume found one.
  const bool creates_file = !resumed.has_value();
  SweepState state = open_results(options, plan, job, mpi, job_hardware, resumed);
  StopRecorder stop_recorder(state.results.get(), job.output_path, creates_file);

  // On stderr, so that a log of stdout (the report, the tables, the verdict) never holds it, as curl and pip do.
  SweepProgress progress(stderr, progress_in_place(stderr), static_cast<int>(plan.size()), total_runs);
  if (mpi.rank == 0 && !job.plan.empty()) print_sweep_plan(stdout, job.plan, job.output_path);
  SweepRun sweep{std::move(state), &stop_recorder, &progress, {}, {}};
  AdaptiveTrials trials(options, plan, job.output_path, backend_name(job.choice.backend));
  std::vector<SweepTableRow> table;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    trials.starting(i);
    if (trials.left_out(i)) {
      if (mpi.rank == 0) progress.skip(plan[i].runs());
      continue;
    }
    table.push_back(run_plan_entry(plan, i, job, mpi, sweep));
    trials.finished(i, mpi);
  }
  if (mpi.rank == 0) {
    progress.clear();
    sweep.state.results->close();
    if (plan.size() > 1) print_sweep_table(stdout, table);
    // Last, after the summaries: the answer to the suite's question, computed with the analyzer's statistics from
    // the file just written, so it is literally what mgpu_analyze report says of it.
    print_verdict(stdout, read_results_file(job.output_path), mpi.size);
  }
  // The others wait here, not in MPI_Finalize, whose wait for rank 0 the start-up deadline bounds.
  barrier(mpi, "rank 0 to write the summary and the verdict", false);
}

}  // namespace mgpu
