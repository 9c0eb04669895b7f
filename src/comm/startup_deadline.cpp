// Purpose: the start-up deadline's thread (startup_deadline.hpp).
#include "comm/startup_deadline.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "comm/mpi_context.hpp"
#include "comm/watchdog.hpp"
#include "platform/console_line.hpp"
#include "platform/shutdown_signals.hpp"

namespace mgpu {
namespace startup_deadline {
namespace {

// How often the thread looks: a tenth of the one-second resolution the stop line gives.
constexpr auto kPollInterval = std::chrono::milliseconds(20);
// A poll that comes this much later than asked means the process was stopped (SIGSTOP, a suspended machine): the time
// it spent stopped is no evidence that this rank is stuck, so the stretch starts again (a stopped rank that is
// continued by its launcher's kill must not report itself as the stalled one).
constexpr double kStoppedGapSeconds = 1.0;
// A gap this long is taken for a stop (was_stopped): longer than any scheduling delay of a sleeping thread on a loaded
// machine, shorter than the watchdog's notices take to stop a job for a stopped peer.
constexpr double kStoppedSeconds = 3.0;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct State {
  std::atomic<bool> armed{false};
  std::atomic<bool> active{false};  // between begin() and finished()
  std::atomic<bool> down{false};    // stand_down(): for good
  std::atomic<double> limit{kDefaultSeconds};
  std::atomic<double> progress_s{0};  // the last begin, wait start or wait end
  std::atomic<int> waits{0};
  std::atomic<int> rank{0};
  std::atomic<int> ranks{0};  // the job's; 0 before arm()
  std::atomic<bool> was_stopped{false};
  std::atomic<double> last_poll_s{0};  // the watching thread's last look; 0 before it first looks
  std::mutex names;                    // guards the two strings
  std::string phase;
  std::string rank_name;
};

// Never destroyed: the thread may still read it while the process exits.
State& state() {
  static State* s = new State;
  return *s;
}

[[noreturn]] void end_process(const std::string& line, int status) {
  std::fprintf(stderr, "%smgpu_bench: %s\n", message_start(), line.c_str());
  std::fflush(stderr);
  // Not MPI_Abort: MPI is initialised for one thread, and the main thread may be inside MPI. A rank that exits
  // without MPI_Finalize ends the job: mpirun aborts it, srun does with --kill-on-bad-exit (launch/).
  std::_Exit(status);
}

// A CUDA tool (compute-sanitizer, Nsight Compute) is attached through the driver's injection library, which it names
// in this variable; such a tool slows set-up many times over.
bool under_cuda_tool() {
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  return injection != nullptr && *injection != '\0';
}

// A job of one rank: no call it makes waits for another rank, so the stretch is this rank's own work, slow or stuck.
std::string one_rank_stall_ending(const std::string& phase) {
  const bool mpi_start = phase.rfind("MPI start", 0) == 0;
  return std::string(": the job has one rank, so nothing waits for another; its own work took this long") +
         (under_cuda_tool() ? " under a CUDA tool (CUDA_INJECTION64_PATH is set), which slows set-up many times" : "") +
         "; give a longer --timeout (0: none)" +
         (mpi_start ? "; nothing was measured" : "; the runs completed before are in the results file");
}

std::string stall_line(const std::string& who, const std::string& phase, double stalled, double limit, int ranks) {
  char figures[128];
  std::snprintf(figures, sizeof figures, " was held %.1f s in ", stalled);
  char limit_text[64];
  std::snprintf(limit_text, sizeof limit_text, " (limit %g s, --timeout)", limit);
  if (ranks == 1)
    return "watchdog stopped the job: " + who + figures + phase + limit_text + one_rank_stall_ending(phase);
  const bool mpi_start = phase.rfind("MPI start", 0) == 0;
  // Such a stretch is one call that waits for the other ranks inside a library (MPI_Init, NCCL's connection set-up at
  // the first collective): the rank that holds it cannot be named from here.
  return "watchdog stopped the job: " + who + figures + phase + limit_text +
         (mpi_start ? " by MPI_Init, which waits for every rank: a rank that never started, or ranks that cannot reach "
                      "each other, hold it; nothing was measured"
                    : " by a call that no bounded wait covers, most often one that waits for the other ranks (a rank "
                      "stopped or lost holds it); the runs completed before are in the results file; --resume "
                      "completes the job");
}

void watch() {
  State& s = state();
  double signal_seen_s = 0;
  double last_poll_s = now_seconds();
  for (;;) {
    std::this_thread::sleep_for(kPollInterval);
    const double now = now_seconds();
    if (now - last_poll_s > kStoppedGapSeconds) s.progress_s.store(now);
    if (now - last_poll_s > kStoppedSeconds) s.was_stopped.store(true);
    last_poll_s = now;
    s.last_poll_s.store(now);
    if (s.down.load() || !s.active.load() || s.waits.load() > 0) {
      signal_seen_s = 0;
      continue;
    }
    std::string phase;
    std::string who;
    {
      std::lock_guard<std::mutex> lock(s.names);
      phase = s.phase;
      who = s.rank_name;
    }
    if (const int signal_number = pending_shutdown_signal()) {
      if (signal_seen_s == 0) signal_seen_s = now;
      if (now - signal_seen_s > kSignalGraceSeconds)
        end_process("stopped by " + signal_name(signal_number) + ": " + who + " was in " + phase +
                        ", which does not poll for signals; nothing of this phase is kept",
                    128 + signal_number);
      continue;
    }
    const double limit = s.limit.load();
    const double stalled = now - s.progress_s.load();
    const double stagger = kStaggerSeconds * std::min(std::max(s.rank.load(), 0), kMaxStaggeredRanks);
    if (limit > 0 && stalled > limit + stagger)
      end_process(stall_line(who, phase, stalled, limit, s.ranks.load()), watchdog::kStallExitStatus);
  }
}

}  // namespace

int rank_before_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(variable);
    char* end = nullptr;
    if (value == nullptr || *value == '\0') continue;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0) return static_cast<int>(rank);
  }
  return -1;
}

int ranks_before_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"}) {
    const char* value = std::getenv(variable);
    char* end = nullptr;
    if (value == nullptr || *value == '\0') continue;
    const long ranks = std::strtol(value, &end, 10);
    if (*end == '\0' && ranks >= 1) return static_cast<int>(ranks);
  }
  return 1;
}

std::string rank_name_before_mpi() {
  const int rank = rank_before_mpi();
  return "rank " + (rank >= 0 ? std::to_string(rank) : std::string("?")) + "@" + host_name();
}

void arm(double limit_seconds) {
  State& s = state();
  if (s.armed.exchange(true)) return;
  const int ranks = ranks_before_mpi();
  const double default_seconds = ranks == 1 ? watchdog::kOneRankFloorSeconds : kDefaultSeconds;
  set_limit(limit_seconds < 0 ? default_seconds : limit_seconds);
  set_rank(rank_before_mpi(), ranks, rank_name_before_mpi());
  std::thread(watch).detach();
}

void set_limit(double seconds) { state().limit.store(seconds); }

double limit_seconds() { return state().limit.load(); }

void set_rank(int rank, int ranks, const std::string& name) {
  State& s = state();
  s.rank.store(rank);
  s.ranks.store(ranks);
  std::lock_guard<std::mutex> lock(s.names);
  s.rank_name = name;
}

void begin(const std::string& phase) {
  State& s = state();
  {
    std::lock_guard<std::mutex> lock(s.names);
    s.phase = phase;
  }
  s.progress_s.store(now_seconds());
  s.active.store(true);
}

void finished() { state().active.store(false); }

bool was_stopped() {
  // Also a stop the thread has not looked at yet: after SIGCONT the main thread may reach its decision before the
  // thread's next look, and then the thread's last look lies as far back as the stop began.
  const State& s = state();
  const double last_poll_s = s.last_poll_s.load();
  return s.was_stopped.load() || (last_poll_s > 0 && now_seconds() - last_poll_s > kStoppedSeconds);
}

void stand_down() { state().down.store(true); }

void wait_started() {
  State& s = state();
  s.waits.fetch_add(1);
  s.progress_s.store(now_seconds());
}

void wait_ended() {
  State& s = state();
  s.progress_s.store(now_seconds());
  s.waits.fetch_sub(1);
}

}  // namespace startup_deadline
}  // namespace mgpu
