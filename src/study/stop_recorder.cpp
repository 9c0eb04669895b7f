// Purpose: the stop handler of stop_recorder.hpp.
#include "study/stop_recorder.hpp"

#include <filesystem>
#include <utility>

namespace mgpu {

StopRecorder::StopRecorder(ResultsWriter* results, std::string path, bool created_file)
    : results_(results), path_(std::move(path)), created_file_(created_file) {
  watchdog::set_stop_handler([this](const StopReport& report) { return on_stop(report); });
}

StopRecorder::~StopRecorder() { watchdog::set_stop_handler(nullptr); }

std::string StopRecorder::on_stop(const StopReport& report) {
  if (results_ == nullptr) return "";
  std::string kept;
  if (current_ != nullptr) {
    results_->mark_interrupted(*current_, report.reason);
    const int runs = current_->runs_completed();
    kept = std::to_string(runs) + (runs == 1 ? " completed run" : " completed runs") + " of '" + current_->name() +
           "' kept in '" + path_ + "', marked interrupted; --resume completes it";
  } else if (created_file_ && !started_any_) {
    results_->close();
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
    return "nothing was measured yet; '" + path_ + "' removed";
  } else {
    kept = "no configuration was running; '" + path_ + "' keeps the configurations completed before";
  }
  results_->close();
  return kept;
}

}  // namespace mgpu
