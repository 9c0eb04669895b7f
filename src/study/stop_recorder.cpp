// Purpose: the stop handler of stop_recorder.hpp.
#include "study/stop_recorder.hpp"

#include <utility>

namespace mgpu {

StopRecorder::StopRecorder(ResultsWriter* results, std::string path) : results_(results), path_(std::move(path)) {
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
  } else {
    kept = "no configuration was running; '" + path_ + "' keeps the configurations completed before";
  }
  results_->close();
  return kept;
}

}  // namespace mgpu
