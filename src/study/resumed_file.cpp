// Purpose: reading the file --resume continues (resumed_file.hpp).
#include "study/resumed_file.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "platform/error.hpp"
#include "study/sweep_plan.hpp"

namespace mgpu {

std::optional<ResultsFile> read_resumed_file(const BenchOptions& options, const std::string& path,
                                             const MpiContext& mpi) {
  std::optional<ResultsFile> resumed;
  std::string error;
  std::error_code ignored;
  if (mpi.rank == 0 && options.resume && std::filesystem::exists(path, ignored)) {
    try {
      resumed = read_results_file(path);
    } catch (const UsageError& e) {
      error = e.what();
    }
  }
  agree_or_throw(mpi, error);
  return resumed;
}

int trials_in_resumed_file(const std::optional<ResultsFile>& resumed, const MpiContext& mpi) {
  int trials = resumed ? 1 : 0;
  if (resumed) {
    for (const ConfigurationResults& configuration : resumed->configurations) {
      const bool named_as_trial = without_trial(configuration.metadata.name) != configuration.metadata.name;
      trials = std::max({trials, static_cast<int>(configuration.metadata.configuration.trial), named_as_trial ? 2 : 1});
    }
  }
  return static_cast<int>(allgather_doubles(mpi, trials).front());
}

}  // namespace mgpu
