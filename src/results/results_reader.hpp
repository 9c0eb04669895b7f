// Purpose: reading and validating the HDF5 results file (mgpu_analyze, --resume and the tests): every configuration
// with its attributes and per-run datasets, and the standalone groups (/allreduce, /probe).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "platform/error.hpp"  // the UsageError and Error this interface throws
#include "results/attribute_text.hpp"
#include "results/results_schema.hpp"
#include "results/run_record.hpp"

namespace mgpu {

using results_schema::AllreduceSweep;
using results_schema::ConfigurationMetadata;
using results_schema::ConfigurationProgress;
using results_schema::HardwareProbe;
using results_schema::Measurements;
using results_schema::ResultArray;
using results_schema::RootMetadata;

// One configuration as read back. Every per-run array has runs_completed rows: a row beyond that belongs to a run
// whose append was interrupted and is ignored.
struct ConfigurationResults {
  ConfigurationMetadata metadata;
  ConfigurationProgress progress;
  std::vector<std::uint8_t> is_warmup;  // [steps]
  Measurements measurements;
  // Every attribute of the group as text (integers exactly, floats in shortest round-trip form, arrays joined by ","),
  // also those this build's ConfigurationMetadata does not name: mgpu_analyze keys configurations on them. An
  // attribute of this build's schema that an older file lacks reads as what the file implies (the metadata's text:
  // overlap_update "per-bucket" where an older file's overlap is on).
  std::map<std::string, std::string> attribute_text;

  int runs() const { return progress.runs_completed; }
  int ranks() const { return metadata.ranks(); }
  int steps() const { return metadata.total_steps(); }
  // docs/measurement.md: the time of a distributed step is the maximum over ranks of step_ms.
  double distributed_step_ms(int run, int step) const;
};

struct ResultsFile {
  std::string path;
  RootMetadata root;
  std::vector<ConfigurationResults> configurations;  // in the order they were added

  // Throws UsageError naming the file and the configuration when there is none of that name.
  const ConfigurationResults& configuration(const std::string& name) const;
};

// Reads and validates a whole results file. Throws UsageError with one line naming the file when it does not exist,
// is empty, is not an HDF5 file ("'x' is not an HDF5 file"), was not written by mgpu_bench, has a schema_version newer
// than results_schema::kVersion (naming both), or lacks an attribute or dataset (naming the group and the name) or has
// one of the wrong shape; other HDF5 failures throw Error, also prefixed with the file name.
ResultsFile read_results_file(const std::string& path);

// Read them back; UsageError naming the file when it has no such group or its datasets disagree with its attributes.
AllreduceSweep read_allreduce_sweep(const std::string& path);
HardwareProbe read_hardware_probe(const std::string& path);

}  // namespace mgpu
