// Purpose: what rank 0 keeps when the job is stopped early (watchdog or SIGTERM/SIGINT): the configuration it was
// measuring is marked interrupted with the reason, the file is flushed and closed with every completed run.
#pragma once

#include <string>

#include "comm/watchdog.hpp"
#include "results/results_writer.hpp"

namespace mgpu {

// Rank 0 only: registers itself as the watchdog's stop handler for its lifetime.
class StopRecorder {
 public:
  // created_file: this job created the file (not --resume of an existing one); stopped before any configuration
  // started, such a file holds nothing and is removed rather than left as an empty results file.
  StopRecorder(ResultsWriter* results, std::string path, bool created_file);
  ~StopRecorder();
  StopRecorder(const StopRecorder&) = delete;
  StopRecorder& operator=(const StopRecorder&) = delete;

  // The group being measured now (nullptr between configurations).
  void set_current(ResultsWriter::Configuration* group) {
    current_ = group;
    started_any_ = started_any_ || group != nullptr;
  }

 private:
  std::string on_stop(const StopReport& report);

  ResultsWriter* results_;
  std::string path_;
  bool created_file_;
  ResultsWriter::Configuration* current_ = nullptr;
  bool started_any_ = false;
};

}  // namespace mgpu
