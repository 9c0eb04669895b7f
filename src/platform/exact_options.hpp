// Purpose: the one command-line style every option parser of both programs uses.
#pragma once

#include <boost/program_options/parsers.hpp>

namespace mgpu {

// Boost's default style without its guessing: "--run 2" is refused, not taken for "--runs 2", so that an option
// misspelt today cannot change meaning when an option of that prefix is added tomorrow.
inline constexpr int kExactOptions = boost::program_options::command_line_style::default_style &
                                     ~boost::program_options::command_line_style::allow_guessing;

}  // namespace mgpu
