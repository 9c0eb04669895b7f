// Purpose: rank 0's progress through a sweep (configurations done / total, the current one, elapsed time, estimated
// time left), on stderr: one line redrawn in place on a terminal, plain lines at each configuration's start and end
// otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "platform/console_line.hpp"

namespace mgpu {

// "45s", "12m05s", "3h02m07s".
std::string format_duration(double seconds);

class SweepProgress {
 public:
  // `terminal`: redraw one line in place (pass progress_in_place(out)); otherwise print a line per event.
  SweepProgress(std::FILE* out, bool terminal, int configurations, long long total_runs);

  // A configuration --resume found complete: counted as done, costs no time.
  void skip(long long runs);
  // Runs the current configuration planned but will not measure (it stopped early): no longer left.
  void drop_runs(long long runs);
  void start_configuration(const std::string& name, int runs);
  void finish_run();
  void finish_configuration();
  // Erases the in-place line before other output goes to the same terminal (nothing otherwise).
  void clear();
  // Draws the in-place line again after other output (nothing when not a terminal).
  void redraw();

  // "[2/10 done] large_b32_n2_cuda run 3/50 | elapsed 1m02s | left ~4m10s"
  std::string status_line() const;

 private:
  double elapsed_seconds() const;

  std::FILE* out_;
  bool terminal_;
  bool drawn_ = false;
  int configurations_;
  int configurations_done_ = 0;
  long long runs_left_;      // runs not yet done in this invocation (skipped ones excluded)
  long long runs_done_ = 0;  // runs done in this invocation: the basis of the estimate
  std::string current_;
  int current_runs_ = 0;
  int current_run_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace mgpu
