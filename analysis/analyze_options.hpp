// Purpose: mgpu_analyze's options, declared once per command with their help (report and compare here, predict's in
// predict_options.cpp, trace's in trace_command.cpp): each command's parse reads its declaration, and --help (so
// docs/cli-analyze.md, which bench/generate_docs.py makes of it) prints them.
#pragma once

#include <boost/program_options.hpp>
#include <string>

namespace mgpu::analysis {

// " [--format table|markdown|csv|json]": the formats in a usage line (table.hpp's names).
std::string format_usage();
// Declares --format, its names and what each writes (table.hpp's Format); `help`: what the command writes in it.
void describe_format_option(boost::program_options::options_description& description, const char* help);

// The options of `mgpu_analyze report` and `mgpu_analyze compare`, with their help and defaults.
boost::program_options::options_description report_options();
boost::program_options::options_description compare_options();

// The whole --help: every command's usage, then per command what it does and its declared options.
std::string analyze_help();

}  // namespace mgpu::analysis
