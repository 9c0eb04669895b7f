// Purpose: the watchdog of watchdog.hpp: deadlines, stall notices between ranks, and the one way the job stops early.
#include "comm/watchdog.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <thread>

#include "comm/mpi_context.hpp"
#include "comm/startup_deadline.hpp"
#include "platform/console_line.hpp"
#include "platform/shutdown_signals.hpp"

namespace mgpu {
namespace watchdog {
[[noreturn]] void stop_for_signal(int signal_number);
}  // namespace watchdog
namespace {

// A notice: "I stopped" sent by a rank that stops to every other rank, so that they stop too instead of waiting for
// their own deadline, and so that the ranks that never send one can be named as the stalled ones. Its payload: the
// signal that stopped the sender, kStallNotice for a stall, kErrorNotice for an error only the sender can see (a full
// disk). The tag is far above any the benchmark uses (it uses none).
constexpr int kNoticeTag = 32100;
constexpr int kStallNotice = 0;
constexpr int kErrorNotice = -1;
constexpr int kNoNotice = -2;
// How long a stopping rank listens for the notices of the others before naming the silent ones: a live peer polls
// every millisecond, so it answers within this even when it was busy computing a step.
constexpr double kNoticeGraceSeconds = 2.0;
// A rank other than 0 gives rank 0 this long to mark the results file before it ends the job itself.
constexpr double kRootMarkingSeconds = 3.0;
// How long the abort hooks (ncclCommAbort) may take before the process exits without them.
constexpr double kAbortHooksSeconds = 3.0;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct State {
  int rank = 0;
  int size = 1;
  std::vector<std::string> hosts{"localhost"};
  double timeout_option = -1;  // < 0: derived
  double longest_run_seconds = 0;
  std::string configuration;
  int run = -1;
  int step = -1;
  std::function<std::string(const StopReport&)> stop_handler;
  std::map<const void*, std::function<void()>> abort_hooks;
  bool stopping = false;
  int notice_payload = 0;  // sent buffers must outlive their MPI_Isend: the process exits before they complete
  std::vector<MPI_Request> notice_requests;
};

State& state() {
  static State s;
  return s;
}

std::string rank_at_host(int rank) {
  const State& s = state();
  const std::string host = rank < static_cast<int>(s.hosts.size()) ? s.hosts[rank] : "?";
  return "rank " + std::to_string(rank) + "@" + host;
}

std::string location_text(const StopReport& report) {
  std::string text = report.configuration.empty() ? std::string("before the first configuration")
                                                  : "configuration '" + report.configuration + "'";
  if (report.run >= 0) text += ", run " + std::to_string(report.run);
  if (report.step >= 0) text += ", step " + std::to_string(report.step);
  return text;
}

void send_notices(int payload) {
  State& s = state();
  if (s.size < 2) return;
  s.notice_payload = payload;
  s.notice_requests.assign(s.size, MPI_REQUEST_NULL);
  // Unchecked on purpose: a dead peer may make a send fail, and the job is stopping whatever happens.
  for (int r = 0; r < s.size; ++r)
    if (r != s.rank) MPI_Isend(&s.notice_payload, 1, MPI_INT, r, kNoticeTag, MPI_COMM_WORLD, &s.notice_requests[r]);
}

// A notice from a peer, if one has arrived: its payload, or kNoNotice.
int receive_notice(int* from = nullptr) {
  int arrived = 0;
  MPI_Status status{};
  if (MPI_Iprobe(MPI_ANY_SOURCE, kNoticeTag, MPI_COMM_WORLD, &arrived, &status) != MPI_SUCCESS || !arrived)
    return kNoNotice;
  int payload = 0;
  MPI_Recv(&payload, 1, MPI_INT, status.MPI_SOURCE, kNoticeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (from != nullptr) *from = status.MPI_SOURCE;
  return payload;
}

// The ranks that sent no notice within the grace period: the ones that stopped making progress.
std::vector<int> silent_ranks(std::vector<bool> heard) {
  State& s = state();
  heard[s.rank] = true;
  const double until = now_seconds() + kNoticeGraceSeconds;
  while (now_seconds() < until && std::find(heard.begin(), heard.end(), false) != heard.end()) {
    int from = -1;
    if (receive_notice(&from) != kNoNotice)
      heard[from] = true;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::vector<int> silent;
  for (int r = 0; r < s.size; ++r)
    if (!heard[r]) silent.push_back(r);
  return silent;
}

// The abort hooks (ncclCommAbort) after the file is marked and the line printed, on a thread of their own given
// kAbortHooksSeconds: an abort stuck behind a wedged GPU must not keep the process from exiting.
void run_abort_hooks_bounded() {
  State& s = state();
  if (s.abort_hooks.empty()) return;
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::thread([hooks = s.abort_hooks, done] {
    for (const auto& [key, hook] : hooks) hook();
    done->store(true);
  }).detach();
  const double until = now_seconds() + kAbortHooksSeconds;
  while (!done->load() && now_seconds() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Keeps what rank 0 can keep, prints the line (speaker only), ends the job. Never returns.
[[noreturn]] void finish_stop(const StopReport& report, const std::string& line, bool speaker, bool root_alive) {
  State& s = state();
  startup_deadline::stand_down();  // the stop below is bounded by its own steps
  std::string ending;
  if (s.stop_handler) {
    try {
      ending = s.stop_handler(report);
    } catch (const std::exception& e) {
      ending = std::string("the results file could not be marked: ") + e.what();
    }
  } else if (!root_alive) {
    ending = "rank 0 writes the results file: the runs it completed before are in it";
  }
  if (speaker && !line.empty()) {
    std::fprintf(stderr, "%smgpu_bench: %s%s%s\n", message_start(), line.c_str(), ending.empty() ? "" : "; ",
                 ending.c_str());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  run_abort_hooks_bounded();
  if (s.size < 2) std::_Exit(report.exit_status);
  // Rank 0's own exit ends the job; the others give it the time to mark the file first.
  if (s.rank != 0 && root_alive) std::this_thread::sleep_for(std::chrono::duration<double>(kRootMarkingSeconds));
  // A signal reached every rank (the launcher forwards it): each exits with 128 + signal, the status the launcher
  // reports. A stall leaves a rank that cannot exit by itself: MPI_Abort has the launcher kill it.
  if (report.kind == StopReport::Kind::signal) std::_Exit(report.exit_status);
  MPI_Abort(MPI_COMM_WORLD, report.exit_status);
  std::_Exit(report.exit_status);
}

StopReport located_report(StopReport::Kind kind) {
  const State& s = state();
  StopReport report;
  report.kind = kind;
  report.configuration = s.configuration;
  report.run = s.run;
  report.step = s.step;
  return report;
}

[[noreturn]] void stop_for_stall(const std::string& waiting_for, double waited_seconds, int step, int notified_by) {
  State& s = state();
  s.stopping = true;
  send_notices(kStallNotice);
  std::vector<bool> heard(static_cast<std::size_t>(s.size), false);
  if (notified_by >= 0) heard[notified_by] = true;
  const std::vector<int> silent = s.size > 1 ? silent_ranks(heard) : std::vector<int>{s.rank};
  StopReport report = located_report(StopReport::Kind::stall);
  if (step >= 0) report.step = step;
  report.waiting_for = waiting_for;
  report.exit_status = watchdog::kStallExitStatus;
  std::string stalled;
  for (int r : silent) stalled += (stalled.empty() ? "" : ", ") + rank_at_host(r);
  if (stalled.empty()) stalled = "no rank identified (every rank was waiting)";
  const bool root_alive = std::find(silent.begin(), silent.end(), 0) == silent.end();
  const int lowest_alive = [&] {
    for (int r = 0; r < s.size; ++r)
      if (std::find(silent.begin(), silent.end(), r) == silent.end()) return r;
    return s.rank;
  }();
  char waited[32];
  std::snprintf(waited, sizeof waited, "%.1f s", waited_seconds);
  report.reason = "watchdog: " + stalled + " made no progress";
  std::string line = "watchdog stopped the job: " + location_text(report) + ": " + stalled + " made no progress; " +
                     rank_at_host(s.rank) + " waited " + waited + " for " + waiting_for;
  if (s.size == 1) {
    line = "watchdog stopped the job: " + location_text(report) + ": " + rank_at_host(s.rank) + " waited " + waited +
           " for " + waiting_for + ", which never finished";
    report.reason = "watchdog: " + rank_at_host(s.rank) + " waited " + waited + " for " + waiting_for;
  }
  // Told by a peer, hearing from every rank, and stopped itself for a while: this rank is the one the peer found silent
  // (stopped, then continued by the launcher's kill), and the peer has spoken. Ranks that all waited (none stopped)
  // still say so, the lowest speaking.
  const bool spoken_for = silent.empty() && notified_by >= 0 && startup_deadline::was_stopped();
  finish_stop(report, line, s.rank == lowest_alive && !spoken_for, root_alive);
}

// A peer's error (kErrorNotice): rank 0 or the peer says it; this rank only ends with the job.
[[noreturn]] void stop_for_peer_error(int from) {
  StopReport report = located_report(StopReport::Kind::error);
  report.reason = "an error on " + rank_at_host(from);
  report.exit_status = 1;
  finish_stop(report, "", false, true);
}

// Acts on a peer's notice, if one has arrived: stops this rank the way the peer stopped.
void act_on_notice(const std::string& waiting_for, double waited_seconds, const std::function<int()>* current_step) {
  if (state().size < 2) return;
  int from = -1;
  const int payload = receive_notice(&from);
  if (payload == kNoNotice) return;
  if (payload > 0) watchdog::stop_for_signal(payload);
  if (payload == kErrorNotice) stop_for_peer_error(from);
  stop_for_stall(waiting_for, waited_seconds, current_step != nullptr ? (*current_step)() : -1, from);
}

}  // namespace

namespace watchdog {

void set_world(const MpiContext& world) {
  State& s = state();
  s.rank = world.rank;
  s.size = world.size;
  s.hosts = world.hosts;
  startup_deadline::set_rank(s.rank, s.size, rank_at_host(s.rank));
}

void set_timeout_option(double seconds) {
  state().timeout_option = seconds;
  startup_deadline::set_limit(timeout_seconds());
}

double default_timeout_seconds(double longest_run_seconds, int ranks) {
  const double floor = ranks == 1 ? kOneRankFloorSeconds : kDefaultFloorSeconds;
  return std::max(floor, kDefaultRunMultiple * longest_run_seconds);
}

double timeout_seconds() {
  const State& s = state();
  if (s.timeout_option >= 0) return s.timeout_option;
  return default_timeout_seconds(s.longest_run_seconds, s.size);
}

void set_configuration(const std::string& name) {
  State& s = state();
  s.configuration = name;
  s.run = -1;
  s.step = -1;
  s.longest_run_seconds = 0;
  startup_deadline::set_limit(timeout_seconds());
}

void set_run(int run) {
  state().run = run;
  state().step = -1;
}

void set_step(int step) { state().step = step; }

void record_run_seconds(double seconds) {
  State& s = state();
  s.longest_run_seconds = std::max(s.longest_run_seconds, seconds);
  startup_deadline::set_limit(timeout_seconds());
}

void set_stop_handler(std::function<std::string(const StopReport&)> handler) {
  state().stop_handler = std::move(handler);
}

void add_abort_hook(const void* key, std::function<void()> hook) { state().abort_hooks[key] = std::move(hook); }

void remove_abort_hook(const void* key) { state().abort_hooks.erase(key); }

void stop_for_signal(int signal_number) {
  State& s = state();
  s.stopping = true;
  send_notices(signal_number);
  StopReport report = located_report(StopReport::Kind::signal);
  report.signal_number = signal_number;
  report.reason = signal_name(signal_number);
  report.exit_status = 128 + signal_number;
  const std::string line = "stopped by " + signal_name(signal_number) + ": " + location_text(report);
  // A peer that stopped first for a stall or an error (its notice is here, or this rank was itself the stopped one)
  // has said why the job ends; the signal is then the launcher ending this rank on its account (a stopped rank is
  // continued and sent SIGTERM), not news to the user. A peer's signal notice is the same signal reaching every rank:
  // rank 0 still speaks.
  const int notice = s.size > 1 ? receive_notice() : kNoNotice;
  const bool peer_stopped_first =
      notice == kStallNotice || notice == kErrorNotice || (s.size > 1 && startup_deadline::was_stopped());
  finish_stop(report, line, s.rank == 0 && !peer_stopped_first, true);
}

void stop_for_error(const std::string& message) {
  State& s = state();
  s.stopping = true;
  send_notices(kErrorNotice);
  StopReport report = located_report(StopReport::Kind::error);
  report.reason = message;
  report.exit_status = 1;
  finish_stop(report, "error: " + message, true, s.rank == 0);
}

void stop_if_signalled() {
  if (const int signal_number = pending_shutdown_signal()) stop_for_signal(signal_number);
  act_on_notice("a peer that reported a stall", 0, nullptr);
}

}  // namespace watchdog

BoundedWait::BoundedWait(std::string waiting_for, bool bounded) : waiting_for_(std::move(waiting_for)) {
  started_s_ = now_seconds();
  const double timeout = watchdog::timeout_seconds();
  if (bounded && timeout > 0) deadline_s_ = started_s_ + timeout;
  startup_deadline::wait_started();
}

BoundedWait::~BoundedWait() { startup_deadline::wait_ended(); }

void BoundedWait::check() {
  if (const int signal_number = pending_shutdown_signal()) watchdog::stop_for_signal(signal_number);
  act_on_notice(waiting_for_, now_seconds() - started_s_, current_step_ ? &current_step_ : nullptr);
  if (deadline_s_ > 0 && now_seconds() > deadline_s_)
    stop_for_stall(waiting_for_, now_seconds() - started_s_, current_step_ ? current_step_() : -1, -1);
}

int wait_bounded(MPI_Request& request, const std::string& waiting_for, bool bounded) {
  int done = 0;
  int result = MPI_Test(&request, &done, MPI_STATUS_IGNORE);  // the common case: already complete, no clock read
  if (done || result != MPI_SUCCESS) return result;
  BoundedWait wait(waiting_for, bounded);
  for (long polls = 0;; ++polls) {
    result = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done || result != MPI_SUCCESS) return result;
    // Checking every poll would put an Iprobe between every MPI_Test; every 64th keeps the reaction within
    // microseconds. After a millisecond of waiting, yield: on an oversubscribed node the peer needs the core.
    if (polls % 64 == 0) wait.check();
    if (polls > 1000) std::this_thread::yield();
  }
}

}  // namespace mgpu
