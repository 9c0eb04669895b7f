// Purpose: the Chrome trace-event JSON of `mgpu_analyze trace` (trace.hpp).
#include "trace.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "platform/build_info.hpp"
#include "platform/error.hpp"

namespace mgpu::analysis {

RunSelection parse_run_selection(const std::string& text) {
  RunSelection selection;
  if (text == "all") selection.kind = RunSelection::Kind::all;
  if (text == "slowest") selection.kind = RunSelection::Kind::slowest;
  if (text == "median") selection.kind = RunSelection::Kind::median;
  if (text == "fastest") selection.kind = RunSelection::Kind::fastest;
  if (text == "all" || text == "slowest" || text == "median" || text == "fastest") return selection;
  selection.kind = RunSelection::Kind::listed;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const bool digits = !item.empty() && item.size() < 10 && std::all_of(item.begin(), item.end(), ::isdigit);
    if (!digits)
      throw UsageError("--runs " + text + ": expected all, slowest, median, fastest or run indices such as 0,3 ('" +
                       item + "' is not a run index)");
    selection.listed.push_back(std::stoi(item));
  }
  if (selection.listed.empty()) throw UsageError("--runs " + text + ": no run given");
  return selection;
}

std::vector<int> select_runs(const stats::ConfigurationStats& s, const RunSelection& selection) {
  const int runs = s.runs_total;
  std::vector<int> chosen;
  if (selection.kind == RunSelection::Kind::all || selection.kind == RunSelection::Kind::listed) {
    if (selection.kind == RunSelection::Kind::all) chosen.resize(static_cast<std::size_t>(runs));
    std::iota(chosen.begin(), chosen.end(), 0);
    for (const int run : selection.listed) {
      if (run >= runs)
        throw UsageError("--runs: configuration '" + s.results->metadata.name + "' of '" + s.file + "' has runs 0.." +
                         std::to_string(runs - 1) + ", not run " + std::to_string(run));
      chosen.push_back(run);
    }
    std::sort(chosen.begin(), chosen.end());
    chosen.erase(std::unique(chosen.begin(), chosen.end()), chosen.end());
    return chosen;
  }
  // Runs by throughput, slowest first; a tie keeps run order, so the choice is deterministic.
  std::vector<int> order(static_cast<std::size_t>(runs));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return s.run_throughput[static_cast<std::size_t>(a)] < s.run_throughput[static_cast<std::size_t>(b)];
  });
  if (selection.kind == RunSelection::Kind::slowest) return {order.front()};
  if (selection.kind == RunSelection::Kind::fastest) return {order.back()};
  return {order[static_cast<std::size_t>(runs - 1) / 2]};  // the lower median for an even count
}

namespace {

constexpr double kMicrosecondsPerMs = 1000.0;
// Relative rounding of the measured times (CUDA event times are fp32 milliseconds: 2^-24 ≈ 6e-8), with a margin for
// sums of them.
constexpr double kRoundingOfStoredTimes = 1e-6;
// Runs are separate in time (each starts from a fresh initialisation); the trace leaves a gap of this fraction of
// the run before the next, so runs read as blocks.
constexpr double kGapBetweenRuns = 0.1;

// The track of a rank's compute stream and of its communication stream: adjacent, compute first.
int compute_track(int rank) { return 2 * rank + 1; }
int communication_track(int rank) { return 2 * rank + 2; }

struct TraceBuilder {
  nlohmann::json events = nlohmann::json::array();

  void metadata(const char* name, int pid, int tid, nlohmann::json args) {
    events.push_back({{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}});
  }
  // A complete event ("X"): start and duration in ms, written in µs.
  void slice(const std::string& name, const char* category, int pid, int tid, double start_ms, double duration_ms,
             nlohmann::json args) {
    events.push_back({{"ph", "X"},
                      {"name", name},
                      {"cat", category},
                      {"pid", pid},
                      {"tid", tid},
                      {"ts", start_ms * kMicrosecondsPerMs},
                      {"dur", duration_ms * kMicrosecondsPerMs},
                      {"args", std::move(args)}});
  }
  void counter(const std::string& name, int pid, double at_ms, nlohmann::json values) {
    events.push_back({{"ph", "C"},
                      {"name", name},
                      {"pid", pid},
                      {"tid", 0},
                      {"ts", at_ms * kMicrosecondsPerMs},
                      {"args", std::move(values)}});
  }
};

double phase_ms(const ConfigurationResults& c, Phase p, int run, int rank, int step) {
  return c.measurements.phase_ms[static_cast<int>(p)].at(run, rank, step);
}

// Where a step's phases sit on the compute track, from the step's start (docs/measurement.md: forward from the
// start, backward after it, the wait for the reductions (exposed_comm) after backward, the optimizer after the wait).
// The all-reduce, on the communication stream, ends where the wait ends.
struct StepLayout {
  bool has_phases = false;  // false: step timing only (phases NaN), the step shows whole
  double forward = 0, backward = 0, allreduce = 0, exposed_comm = 0, optimizer = 0, step = 0;
  double until_reduced() const { return forward + backward + exposed_comm; }
};

StepLayout step_layout(const ConfigurationResults& c, int run, int rank, int step) {
  StepLayout l;
  l.step = phase_ms(c, Phase::step, run, rank, step);
  l.forward = phase_ms(c, Phase::forward, run, rank, step);
  l.has_phases = !std::isnan(l.forward);
  if (!l.has_phases) return l;
  l.backward = phase_ms(c, Phase::backward, run, rank, step);
  l.allreduce = phase_ms(c, Phase::allreduce, run, rank, step);
  l.exposed_comm = phase_ms(c, Phase::exposed_comm, run, rank, step);
  l.optimizer = phase_ms(c, Phase::optimizer, run, rank, step);
  return l;
}

nlohmann::json slice_args(int run, int step, int rank, bool warmup, const char* dataset, double value_ms) {
  return {{"run", run},       {"step", step},       {"rank", rank},
          {"warmup", warmup}, {"dataset", dataset}, {"value_ms", value_ms}};
}

// The configuration's process: its name, settings and a compute and a communication track per rank.
void describe_process(TraceBuilder& trace, int pid, const stats::ConfigurationStats& s) {
  const ConfigurationResults& c = *s.results;
  const ConfigurationMetadata& m = c.metadata;
  const int ranks = c.ranks();
  trace.metadata("process_name", pid, 0,
                 {{"name", s.label + " (" + std::to_string(ranks) + (ranks == 1 ? " GPU" : " GPUs") + ", batch " +
                               std::to_string(m.global_batch()) + ", " + s.file + ")"}});
  trace.metadata("process_sort_index", pid, 0, {{"sort_index", pid}});
  // Every attribute of the configuration, as the file holds it; Perfetto shows them as the process's arguments.
  trace.metadata("process_labels", pid, 0, {{"labels", m.device + ", timing " + setting_name(m.training().timing)}});
  trace.events.push_back({{"ph", "i"},
                          {"s", "p"},
                          {"name", "configuration settings"},
                          {"cat", "settings"},
                          {"pid", pid},
                          {"tid", compute_track(0)},
                          {"ts", 0},
                          {"args", c.attribute_text}});
  for (int rank = 0; rank < ranks; ++rank) {
    const std::string where =
        rank < static_cast<int>(m.hosts.size()) ? " " + m.hosts[static_cast<std::size_t>(rank)] : std::string();
    const std::string gpu =
        rank < static_cast<int>(m.gpu_names.size()) ? " " + m.gpu_names[static_cast<std::size_t>(rank)] : "";
    trace.metadata("thread_name", pid, compute_track(rank),
                   {{"name", "rank " + std::to_string(rank) + " compute" + where + gpu}});
    trace.metadata("thread_sort_index", pid, compute_track(rank), {{"sort_index", compute_track(rank)}});
    trace.metadata("thread_name", pid, communication_track(rank),
                   {{"name", "rank " + std::to_string(rank) + " communication"}});
    trace.metadata("thread_sort_index", pid, communication_track(rank), {{"sort_index", communication_track(rank)}});
  }
}

// One rank's step, starting at `start` (ms), and its phases.
void add_rank_step(TraceBuilder& trace, int pid, int run, int step, int rank, bool warmup, const StepLayout& l,
                   double start) {
  const std::string name = (warmup ? "warm-up step " : "step ") + std::to_string(step);
  trace.slice(name, warmup ? "warmup" : "step", pid, compute_track(rank), start, l.step,
              slice_args(run, step, rank, warmup, "step_ms", l.step));
  if (!l.has_phases) return;
  const auto phase = [&](const char* phase_name, const char* dataset, double from, double ms, int track) {
    if (!(ms > 0)) return;
    // Phases that end a few nanoseconds after their step are the rounding of the fp32 event times; a viewer drops a
    // slice that overruns its parent, so such a phase is drawn to the step's end (its args keep the file's value).
    const double overrun = from + ms - (start + l.step);
    const double drawn = overrun > 0 && overrun <= kRoundingOfStoredTimes * l.step ? ms - overrun : ms;
    trace.slice(phase_name, "phase", pid, track, from, drawn, slice_args(run, step, rank, warmup, dataset, ms));
  };
  phase("forward", "forward_ms", start, l.forward, compute_track(rank));
  phase("backward", "backward_ms", start + l.forward, l.backward, compute_track(rank));
  phase("exposed_comm", "exposed_comm_ms", start + l.forward + l.backward, l.exposed_comm, compute_track(rank));
  phase("optimizer", "optimizer_ms", start + l.until_reduced(), l.optimizer, compute_track(rank));
  // Ends where the wait for it ends; never drawn before the step's start.
  phase("allreduce", "allreduce_ms", std::max(start, start + l.until_reduced() - l.allreduce), l.allreduce,
        communication_track(rank));
}

// Every rank's step `step` of `run`, from `now` (ms); returns when the last rank's step ends. Layout rule: a
// reduction completes on every rank at once, so with phase marks the ranks' steps are placed so that their
// reductions end together (a rank that finished backward early waits longer); without them, every rank's step
// starts together.
double add_step(TraceBuilder& trace, int pid, const ConfigurationResults& c, int run, int step, double now) {
  const bool warmup = c.is_warmup[static_cast<std::size_t>(step)] != 0;
  std::vector<StepLayout> layouts;
  bool all_phases = true;
  for (int rank = 0; rank < c.ranks(); ++rank) {
    layouts.push_back(step_layout(c, run, rank, step));
    all_phases = all_phases && layouts.back().has_phases;
  }
  double latest_reduction = 0;  // from the step's start on the rank that reaches the reduction's end last
  if (all_phases)
    for (const StepLayout& l : layouts) latest_reduction = std::max(latest_reduction, l.until_reduced());
  double step_end = now;
  for (int rank = 0; rank < c.ranks(); ++rank) {
    const StepLayout& l = layouts[static_cast<std::size_t>(rank)];
    // Written as an offset from now, so the last rank's step starts exactly where the previous step ended.
    const double start = all_phases ? now + (latest_reduction - l.until_reduced()) : now;
    step_end = std::max(step_end, start + l.step);
    add_rank_step(trace, pid, run, step, rank, warmup, l, start);
  }
  return step_end;
}

// The run's slice on every rank (its throughput and screening), and its clocks and throttling as counters.
void add_run(TraceBuilder& trace, int pid, const stats::ConfigurationStats& s, int run, double run_start,
             double run_end) {
  const ConfigurationResults& c = *s.results;
  for (int rank = 0; rank < c.ranks(); ++rank) {
    nlohmann::json args = {{"run", run},
                           {"samples_per_s", s.run_throughput[static_cast<std::size_t>(run)]},
                           {"modified_z", s.run_modified_z[static_cast<std::size_t>(run)]},
                           {"kept", static_cast<bool>(s.run_kept[static_cast<std::size_t>(run)])}};
    trace.slice("run " + std::to_string(run), "run", pid, compute_track(rank), run_start, run_end - run_start,
                std::move(args));
    // Clocks sampled while the run executed (0 samples: not recorded, no counter).
    if (c.measurements.clock_samples.at(run, rank) > 0) {
      const nlohmann::json clocks = {{"sm_clock_mhz", c.measurements.sm_clock_mhz.at(run, rank)},
                                     {"memory_clock_mhz", c.measurements.memory_clock_mhz.at(run, rank)}};
      trace.counter("rank " + std::to_string(rank) + " clocks (MHz)", pid, run_start, clocks);
      trace.counter("rank " + std::to_string(rank) + " clocks (MHz)", pid, run_end, clocks);
    }
    const nlohmann::json throttled = {{"throttled", static_cast<int>(c.measurements.throttled.at(run, rank))}};
    trace.counter("rank " + std::to_string(rank) + " throttled", pid, run_start, throttled);
    trace.counter("rank " + std::to_string(rank) + " throttled", pid, run_end, throttled);
  }
}

// One configuration as process pid, its runs one after another; appends to the builder.
void add_configuration(TraceBuilder& trace, int pid, const stats::ConfigurationStats& s, const std::vector<int>& runs) {
  describe_process(trace, pid, s);
  double now = 0;  // ms from the trace's start
  for (const int run : runs) {
    const double run_start = now;
    for (int step = 0; step < s.results->steps(); ++step) now = add_step(trace, pid, *s.results, run, step, now);
    add_run(trace, pid, s, run, run_start, now);
    now += kGapBetweenRuns * (now - run_start);
  }
}

const char* selection_name(RunSelection::Kind kind) {
  switch (kind) {
    case RunSelection::Kind::all:
      return "all";
    case RunSelection::Kind::listed:
      return "listed";
    case RunSelection::Kind::slowest:
      return "slowest";
    case RunSelection::Kind::median:
      return "median";
    case RunSelection::Kind::fastest:
      return "fastest";
  }
  return "";
}

}  // namespace

nlohmann::json chrome_trace(const std::vector<stats::ConfigurationStats>& configurations,
                            const RunSelection& selection) {
  TraceBuilder trace;
  nlohmann::json shown = nlohmann::json::object();
  int pid = 1;
  for (const stats::ConfigurationStats& s : configurations) {
    const std::vector<int> runs = select_runs(s, selection);
    shown[s.label] = runs;
    add_configuration(trace, pid++, s, runs);
  }
  return {{"traceEvents", std::move(trace.events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"tool", "mgpu_analyze trace"},
            {"version", project_version()},
            {"runs", selection_name(selection.kind)},
            {"runs_shown", shown},
            {"layout",
             "durations are the file's per-step, per-rank values; positions follow docs/report.md: steps back to "
             "back per run, ranks aligned on the end of each step's reduction, runs separated by a gap"}}}};
}

}  // namespace mgpu::analysis
