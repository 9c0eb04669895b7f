// Purpose: the predict subcommand's command line: every value checked, a bad one refused with one line naming it.
#pragma once

#include "predict.hpp"

namespace mgpu::analysis {

// argv[0] is "predict". Throws UsageError naming the first bad or missing value. Sets `help` when --help was given.
PredictOptions parse_predict_options(int argc, const char* const* argv, bool* help);

}  // namespace mgpu::analysis
