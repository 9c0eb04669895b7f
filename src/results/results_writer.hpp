// Purpose: writing the HDF5 results file: ResultsWriter (rank 0 of mgpu_bench appends one run at a time, the file is
// valid after every run) and the standalone groups (/allreduce, /probe). The format lives in results_schema.hpp and
// is documented in docs/results-format.md; results_reader.hpp reads it back.
#pragma once

#include <cstdint>
#include <memory>
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

// Serial HDF5: only rank 0 writes, after gathering every rank's RunRecord.
class ResultsWriter {
 public:
  // A configuration's group in this file; returned by add_configuration, passed back to append_run and finish.
  class Configuration {
   public:
    const std::string& name() const { return name_; }
    int runs_completed() const { return progress_.runs_completed; }
    bool finished() const { return progress_.complete != 0; }

   private:
    friend class ResultsWriter;
    const void* writer_ = nullptr;  // which writer made it: a handle from another file is a bug
    std::string name_;
    int ranks_ = 0;
    int steps_ = 0;
    int measured_steps_ = 0;  // the divisor of wall_per_step_ms
    ConfigurationProgress progress_;
  };

  // Throws UsageError, one line naming the path, when create() would fail for a reason the user can fix: the file
  // exists and overwrite is false ("output file 'x.h5' exists; use --force to overwrite"), the file is a directory or
  // not writable, or its directory does not exist, is not a directory or is not writable. Creates nothing. Call it
  // before the benchmark starts, so a bad path costs no GPU time.
  static void check_can_create(const std::string& path, bool overwrite);

  // Creates the file (exclusively unless overwrite, which truncates) and writes the root attributes. Runs
  // check_can_create first; removes the file again if anything after creating it fails.
  ResultsWriter(const std::string& path, bool overwrite);
  // --resume: a missing file is checked as check_can_create(path, false) (the sweep starts it); an existing one must be
  // a writable regular file. Throws UsageError naming the path. Whether its contents fit is read_results_file's and
  // the caller's business.
  static void check_can_resume(const std::string& path);
  // Opens an existing results file (validate it with read_results_file first) to add configurations to it.
  static ResultsWriter open_for_resume(const std::string& path);
  // Removes a configuration's group (an incomplete one that --resume reruns); nothing when there is none.
  void remove_configuration(const std::string& name);

  ~ResultsWriter();  // closes the file; failures are printed as warnings
  ResultsWriter(ResultsWriter&&) noexcept;
  ResultsWriter& operator=(ResultsWriter&&) noexcept;
  ResultsWriter(const ResultsWriter&) = delete;
  ResultsWriter& operator=(const ResultsWriter&) = delete;

  // Creates /configurations/<metadata.name> with every attribute (started_utc = now when empty), the fixed is_warmup
  // dataset and empty per-run datasets. Throws Error when the name is taken or invalid, or when a per-rank array's
  // length is not metadata.ranks.
  Configuration add_configuration(const ConfigurationMetadata& metadata);

  // Appends one run: per_rank[r] is what rank r measured (size = ranks, each with warm-up + measured steps, and its
  // throttled flag as judged). Extends every per-run dataset by one row, then updates runs_completed and flushes, so
  // the file on disk is valid and holds this run even if the process dies before the next one. A disk without room for
  // the run is refused first (UsageError, disk_space.hpp), so that a full disk leaves the file valid.
  void append_run(Configuration& configuration, const std::vector<RunRecord>& per_rank);
  // The free space append_run requires for one run of `ranks` × `steps`: 4 × the run's packed bytes (its chunks,
  // grown indexes and attributes, and the interrupted mark that may follow) + 64 KiB, as docs/reliability.md states.
  static std::uintmax_t free_space_to_append_run(int ranks, int steps);

  // Records the replicas' agreement after the runs (replica_check) and flushes.
  void record_replica_check(Configuration& configuration, const std::string& replica_check);

  // Marks the configuration complete (complete = 1, finished_utc = now, stopped_early = why its runs ended before
  // the planned number, "" when they did not) and flushes; no run may be appended after.
  void finish(Configuration& configuration, const std::string& stopped_early = "");

  // Records why the configuration stopped before completing (interrupted, interrupted_utc) and flushes; its completed
  // runs stay as they are and --resume reruns it.
  void mark_interrupted(Configuration& configuration, const std::string& reason);

  // Closes the file now, reporting a failure as an exception (the destructor can only warn).
  void close();

  const std::string& path() const;

 private:
  ResultsWriter();
  // Writes the configuration's progress attributes and flushes (record_replica_check, finish, mark_interrupted).
  void write_progress(Configuration& configuration, const ConfigurationProgress& progress);
  struct Impl;
  Impl& impl() const;
  std::unique_ptr<Impl> impl_;
};

// ---- Standalone measurements: top-level groups (/allreduce, /probe) written whole, once, next to /configurations,
// into a new results file or an existing one, so one file can hold a training sweep and its yardsticks.

// Throws UsageError, one line naming the path, when /<group> cannot be added to `path`: the file does not exist and
// could not be created (ResultsWriter::check_can_create), or it exists and is not a writable mgpu_bench results file
// of schema_version results_schema::kVersion, or it already has /<group> and replace is false ("... already has
// /allreduce; use --force to replace it"). Creates nothing: call it before measuring.
void check_can_add_group(const std::string& path, const std::string& group, bool replace);

// Write /allreduce or /probe into `path` (created as an empty results file when it does not exist; an existing
// /<group> is replaced only when replace is true). Conditions' started_utc/finished_utc are stamped now when empty.
// A failure removes the half-written group (and the file, if this call created it). Training configurations in the
// file are never touched.
void write_allreduce_sweep(const std::string& path, const AllreduceSweep& sweep, bool replace);
void write_hardware_probe(const std::string& path, const HardwareProbe& probe, bool replace);

}  // namespace mgpu
