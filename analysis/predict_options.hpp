// Purpose: the predict subcommand's command line: its declared options, every value checked, a bad one refused with
// one line naming it.
#pragma once

#include <boost/program_options.hpp>

#include "predict.hpp"

namespace mgpu::analysis {

// predict's options, with their help and defaults; --model, --layers, --batch, --gpus and --precision are mgpu_bench's
// (their rows of the settings table: names, values, bounds).
boost::program_options::options_description predict_option_description();

// argv[0] is "predict". Throws UsageError naming the first bad or missing value. Sets `help` when --help was given.
PredictOptions parse_predict_options(int argc, const char* const* argv, bool* help);

}  // namespace mgpu::analysis
