// Purpose: the values a results file's step times may hold before any statistic uses them: a step_ms that is NaN,
// infinite, zero or negative is refused with one line naming the file, configuration, run, rank and step; it would
// otherwise turn into "0 samples/s" or an infinite mean without a word. Phases may be NaN ("not measured": --timing
// step or none, a framework peer's inseparable phases) but never infinite. (A phase between events of two streams
// may come out a hair below zero, so phases are not held to a sign.)
#pragma once

#include <string>

#include "results/results_reader.hpp"

namespace mgpu::stats {

// Throws UsageError at the first bad value of the configuration's completed runs (warm-up steps included).
void check_step_times(const ConfigurationResults& configuration, const std::string& file);

}  // namespace mgpu::stats
