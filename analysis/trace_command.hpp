// Purpose: the command line of `mgpu_analyze trace FILE.h5 [--configuration NAME] [--runs R1,R2|all|slowest|median|
// fastest] [-o trace.json]`: reads the file, builds the Chrome trace (trace.hpp) and writes it.
#pragma once

#include <boost/program_options.hpp>

namespace mgpu::analysis {

// Usage and what trace does, for mgpu_analyze --help.
extern const char kTraceUsage[];
extern const char kTraceAbout[];
// trace's options, with their help and defaults.
boost::program_options::options_description trace_option_description();

// argv[0] is "trace". Returns the exit status; throws UsageError on bad input (nothing is written then).
int run_trace_command(int argc, char** argv);

}  // namespace mgpu::analysis
