// Purpose: formatting and drawing of the sweep's progress line.
#include "study/sweep_progress.hpp"

#include <algorithm>
#include <cmath>

#include "platform/wall_clock.hpp"

namespace mgpu {

std::string format_duration(double seconds) {
  const long long total = std::llround(std::max(0.0, seconds));
  char text[48];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%lldh%02lldm%02llds", total / 3600, total / 60 % 60, total % 60);
  else if (total >= 60)
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  else
    std::snprintf(text, sizeof text, "%llds", total);
  return text;
}

SweepProgress::SweepProgress(std::FILE* out, bool terminal, int configurations, long long total_runs)
    : out_(out), terminal_(terminal), configurations_(configurations), runs_left_(total_runs) {}

double SweepProgress::elapsed_seconds() const { return seconds_since(start_); }

std::string SweepProgress::status_line() const {
  const double elapsed = elapsed_seconds();
  // Time per run so far times the runs left: rough across configurations of different cost, but it only counts runs
  // of this invocation, so skipped configurations do not make it optimistic.
  const std::string left = runs_done_ > 0 ? "~" + format_duration(elapsed / runs_done_ * runs_left_) : "?";
  std::string line = "[" + std::to_string(configurations_done_) + "/" + std::to_string(configurations_) + " done]";
  if (!current_.empty())
    line += " " + current_ + " run " + std::to_string(current_run_) + "/" + std::to_string(current_runs_);
  return line + " | elapsed " + format_duration(elapsed) + " | left " + left;
}

void SweepProgress::skip(long long runs) {
  ++configurations_done_;
  runs_left_ -= runs;
}

void SweepProgress::drop_runs(long long runs) { runs_left_ -= runs; }

void SweepProgress::start_configuration(const std::string& name, int runs) {
  current_ = name;
  current_runs_ = runs;
  current_run_ = 0;
  if (terminal_) return redraw();
  std::fflush(stdout);  // what rank 0 printed comes first
  std::fprintf(out_, "# progress: %s, starting\n", status_line().c_str());
  std::fflush(out_);
}

void SweepProgress::finish_run() {
  ++current_run_;
  ++runs_done_;
  --runs_left_;
  redraw();
}

void SweepProgress::finish_configuration() {
  ++configurations_done_;
  const std::string name = current_;
  current_.clear();
  if (terminal_) return redraw();
  std::fflush(stdout);
  std::fprintf(out_, "# progress: %s finished; %s\n", name.c_str(), status_line().c_str());
  std::fflush(out_);
}

void SweepProgress::clear() {
  if (!terminal_ || !drawn_) return;
  std::fputs("\r\033[K", out_);  // carriage return, erase to the end of the line
  std::fflush(out_);
  drawn_ = false;
}

void SweepProgress::redraw() {
  if (!terminal_) return;
  std::fflush(stdout);  // what rank 0 printed comes first (when `out` is another stream)
  std::fprintf(out_, "\r\033[K%s", status_line().c_str());
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace mgpu
