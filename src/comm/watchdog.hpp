// Purpose: the watchdog: every wait of the benchmark on a peer, the GPU or MPI is bounded. A wait that outlives its
// deadline, a peer's stall notice or a pending SIGTERM/SIGINT stops the whole job at once with one line naming the
// configuration, run, step, the rank(s) and host(s) that stalled and what was being waited for, after the stop handler
// (rank 0: mark the results file) has run. Nothing unwinds through a stalled CUDA context or communicator.
#pragma once

#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

namespace mgpu {

struct MpiContext;

// Why the job stops early; given to the stop handler before the process exits.
struct StopReport {
  enum class Kind { stall, signal, error };
  Kind kind = Kind::stall;
  int signal_number = 0;      // Kind::signal
  std::string configuration;  // "" before the first configuration starts
  int run = -1;               // -1 = between runs
  int step = -1;              // -1 = not inside a step the wait knows
  std::string reason;         // short, for the results file: "SIGTERM", "watchdog: rank 1@node stalled"
  std::string waiting_for;    // what this rank waited for (stalls)
  int exit_status = 1;
};

namespace watchdog {

// Exit status of a job the watchdog stopped (the timeout(1) convention).
inline constexpr int kStallExitStatus = 124;
// The floor of the derived default timeout, and how many times its longest run a configuration may wait at once.
inline constexpr double kDefaultFloorSeconds = 60.0;
inline constexpr double kDefaultRunMultiple = 10.0;
// The floor for a job of one rank: it waits for no peer, so the floor only has to end a rank whose own work is stuck,
// and must not stop a slow set-up (under compute-sanitizer the GEMM tuning of one rank took over 60 s on an H200).
inline constexpr double kOneRankFloorSeconds = 600.0;

// Called once per process, after MPI is up: the world's ranks and hosts, for the stall message and the notices.
void set_world(const MpiContext& world);
// --timeout: seconds > 0 bounds every wait by that; 0 disables the deadline (signals and notices still stop the job);
// negative (the default) derives it from the configuration's runs (default_timeout_seconds).
void set_timeout_option(double seconds);
// max(floor, kDefaultRunMultiple x the longest run seen), the floor kOneRankFloorSeconds for a job of one rank and
// kDefaultFloorSeconds otherwise. Never fires on a healthy run: no single wait of a run lasts longer than the run
// itself.
double default_timeout_seconds(double longest_run_seconds, int ranks);
// The deadline of a wait that starts now; 0 = unbounded.
double timeout_seconds();

// Where the job is, for the stop line; the configuration also resets the derived timeout's run history.
void set_configuration(const std::string& name);
void set_run(int run);
void set_step(int step);
void record_run_seconds(double seconds);

// Rank 0's handler: keeps what can be kept (marks the results file) and returns the end of the stop line, e.g.
// "22 completed runs kept in 'x.h5'; --resume completes the configuration". Runs at most once.
void set_stop_handler(std::function<std::string(const StopReport&)> handler);
// Called before the job stops (ncclCommAbort of a live communicator); removed by key when the owner goes away.
void add_abort_hook(const void* key, std::function<void()> hook);
void remove_abort_hook(const void* key);

// Stops the job now for a pending signal: the stop handler, the one line, exit status 128 + signal.
[[noreturn]] void stop_for_signal(int signal_number);
// Stops the job when a signal is pending or a peer sent a notice; between runs and other points outside any wait.
void stop_if_signalled();
// Stops the job for an error only this rank can see (rank 0: a results file the disk cannot hold): the stop handler,
// "mgpu_bench: error: <message>; <what was kept>", exit status 1; the other ranks stop on its notice.
[[noreturn]] void stop_for_error(const std::string& message);

}  // namespace watchdog

// One bounded wait: construct it where the wait starts, call check() in the poll loop. check() never returns when the
// deadline has passed, a peer sent a stall notice, or SIGTERM/SIGINT is pending: it stops the job (watchdog.hpp).
class BoundedWait {
 public:
  // waiting_for: what, in the user's terms ("the gradient all-reduce (MPI_Iallreduce)"). bounded = false: no deadline
  // (a rank idle while others run a configuration), still stopped by signals and notices.
  explicit BoundedWait(std::string waiting_for, bool bounded = true);
  ~BoundedWait();
  BoundedWait(const BoundedWait&) = delete;
  BoundedWait& operator=(const BoundedWait&) = delete;
  // current_step: asked only when the job stops, for the step the wait was in (e.g. the first step whose end event
  // has not completed), where the set_step location does not know it.
  void set_step_source(std::function<int()> current_step) { current_step_ = std::move(current_step); }
  void check();

 private:
  std::string waiting_for_;
  double started_s_ = 0;
  double deadline_s_ = 0;  // 0 = none
  std::function<int()> current_step_;
};

// Polls `request` to completion under a BoundedWait; returns MPI_Test's error code (check it with MGPU_MPI_CHECK).
int wait_bounded(MPI_Request& request, const std::string& waiting_for, bool bounded = true);

}  // namespace mgpu
