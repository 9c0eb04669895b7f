// Purpose: what one rank measures in one run: per-step phase times (docs/measurement.md), loss, memory and clocks.
#pragma once

#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace mgpu {

// The phases of docs/measurement.md, in the order they are stored.
enum class Phase : int { forward = 0, backward, allreduce, exposed_comm, optimizer, step };
inline constexpr int kPhaseCount = 6;
inline constexpr std::array<const char*, kPhaseCount> kPhaseNames = {"forward",      "backward",  "allreduce",
                                                                     "exposed_comm", "optimizer", "step"};
inline const char* phase_name(Phase phase) { return kPhaseNames[static_cast<int>(phase)]; }

struct RunRecord {
  int total_steps = 0;           // warm-up + measured; warm-up steps come first
  std::vector<double> phase_ms;  // [phase][step], phase-major: kPhaseCount * total_steps
  std::vector<double> loss;      // [step]: this rank's mean loss over its local batch (before the update)
  double memory_peak_bytes = 0;  // GPU: device memory in use (total - free) after the run; CPU: peak RSS
  double sm_clock_mhz = 0;       // mean of samples taken while the run executed; 0 if not available
  double memory_clock_mhz = 0;
  int clock_samples = 0;
  // Wall span of the measured steps on this rank: first measured step's start -> last step's end, gaps between steps
  // (data generation, launches) included. Divided by the measured steps it is comparable between --timing modes.
  double measured_wall_ms = 0;
  // Whether the run marked every phase of every step (TrainingSettings::marks_phases); phase_ms holds NaN for the
  // phases a run without marks did not measure.
  bool phases_marked = true;
  // A run without marks inside its steps: the step's bookkeeping and batch generation per step, timed alone after
  // the run and already subtracted from its step_ms; NaN in every other run (their marks leave it outside the step).
  double batch_generation_ms = std::numeric_limits<double>::quiet_NaN();
  // Whether the run's mean SM clock was throttled against the rank's maximum (stats/run_checks.hpp): judged by rank 0
  // once the ranks' records are gathered (it knows every rank's maximum), recorded as given; not packed.
  bool throttled = false;

  explicit RunRecord(int steps = 0)
      : total_steps(steps), phase_ms(static_cast<std::size_t>(kPhaseCount) * steps, 0.0), loss(steps, 0.0) {}
  double& ms(Phase phase, int step) { return phase_ms[static_cast<std::size_t>(phase) * total_steps + step]; }
  double ms(Phase phase, int step) const { return phase_ms[static_cast<std::size_t>(phase) * total_steps + step]; }

  // Flat form for MPI_Gather: phase_ms, loss, then the scalars. Every rank of a run has the same size.
  static std::size_t packed_size(int steps) { return static_cast<std::size_t>(kPhaseCount + 1) * steps + 7; }
  std::vector<double> pack() const;
  static RunRecord unpack(const double* packed, int steps);
};

inline std::vector<double> RunRecord::pack() const {
  std::vector<double> packed(phase_ms);
  packed.insert(packed.end(), loss.begin(), loss.end());
  packed.insert(packed.end(), {memory_peak_bytes, sm_clock_mhz, memory_clock_mhz, double(clock_samples),
                               measured_wall_ms, phases_marked ? 1.0 : 0.0, batch_generation_ms});
  return packed;
}

inline RunRecord RunRecord::unpack(const double* packed, int steps) {
  RunRecord record(steps);
  const std::size_t phase_values = static_cast<std::size_t>(kPhaseCount) * steps;
  record.phase_ms.assign(packed, packed + phase_values);
  record.loss.assign(packed + phase_values, packed + phase_values + steps);
  const double* tail = packed + phase_values + steps;
  record.memory_peak_bytes = tail[0];
  record.sm_clock_mhz = tail[1];
  record.memory_clock_mhz = tail[2];
  record.clock_samples = static_cast<int>(tail[3]);
  record.measured_wall_ms = tail[4];
  record.phases_marked = tail[5] != 0;
  record.batch_generation_ms = tail[6];
  return record;
}

}  // namespace mgpu
