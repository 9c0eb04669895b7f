// Purpose: the one command-line style every option parser of both programs uses, and its message for a word that is
// not an option.
#pragma once

#include <boost/program_options/errors.hpp>
#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <string>

namespace mgpu {

// Boost's default style without its guessing: "--run 2" is refused, not taken for "--runs 2", so that an option
// misspelt today cannot change meaning when an option of that prefix is added tomorrow.
inline constexpr int kExactOptions = boost::program_options::command_line_style::default_style &
                                     ~boost::program_options::command_line_style::allow_guessing;

// Boost's message, and for an unknown option the options it begins: "unrecognised option '--run' (did you mean
// --runs?)".
inline std::string option_error_message(const boost::program_options::error& error,
                                        const boost::program_options::options_description& options) {
  std::string message = error.what();
  const auto* unknown = dynamic_cast<const boost::program_options::unknown_option*>(&error);
  if (unknown == nullptr) return message;
  std::string word = unknown->get_option_name();
  word.erase(0, word.find_first_not_of('-'));
  std::string matches;
  for (const auto& option : options.options()) {
    const std::string& name = option->long_name();
    if (word.empty() || name.rfind(word, 0) != 0 || name == "stray") continue;
    matches += (matches.empty() ? "--" : " or --") + name;
  }
  return matches.empty() ? message : message + " (did you mean " + matches + "?)";
}

}  // namespace mgpu
