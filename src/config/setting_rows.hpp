// Purpose: the kinds of row of the settings table (settings_table.hpp) and their columns: the facts every row has (its
// attribute, role in pairing, schema version, where it applies), a recorded setting reached by its member with its
// option where one sets it, and a step option resolved from the command line's request.
#pragma once

#include <cstdint>
#include <string>

#include "config/configuration.hpp"
#include "config/step_request.hpp"

namespace mgpu {

// What a configuration attribute takes part in; each role includes the ones above it in this list:
//   condition: where and when it ran or what the process chose; no identity (a --resume on another node of the same
//              kind still matches; gemm_choices is an outcome of set-up, not a setting).
//   setting:   what ran: the --resume identity (results/configuration_identity.hpp) refuses a stored configuration
//              that differs.
//   compared:  also keeps configurations apart in compare (stats/pairing_identity.hpp), not in the scaling table.
//   scaled:    also keeps an N-GPU configuration from a 1-GPU baseline of other settings (the scaling table).
enum class AttributeRole { condition, setting, compared, scaled };

// Where a recorded setting means something; where it does not, the results file stores "n/a" (or 0).
enum class Applies {
  always,
  with_overlap,    // exists only with overlap on
  with_own_gemms,  // where this program chose the GEMMs: mgpu_bench on the CUDA back-end (not the CPU, not the peer)
};

// The columns every row has.
struct SettingFacts {
  const char* attribute;       // the results file's attribute and the banner's and the labels' name
  AttributeRole role;          // in pairing
  std::int32_t since_version;  // the schema version that added it (1: an original one); never changes
  Applies applies = Applies::always;
  // --X auto decides it per local batch (config/resolver.hpp), or it exists only with such a setting: one default
  // job's batch sweep changes it along the way, so the answer's speedup curves do not split on it.
  bool decided_per_batch = false;
  bool math_reference = false;  // the math check's float64 reference step depends on it (its cache key)
  // The rows compare may leave out together and a configuration's label names together ("nccl": compare
  // --ignore-nccl-settings, the label's "nccl Tree/Simple"); nullptr: none.
  const char* group = nullptr;

  constexpr SettingFacts applying(Applies where) const {
    SettingFacts f = *this;
    f.applies = where;
    return f;
  }
  constexpr SettingFacts per_batch() const {
    SettingFacts f = *this;
    f.decided_per_batch = true;
    return f;
  }
  constexpr SettingFacts in_math_reference() const {
    SettingFacts f = *this;
    f.math_reference = true;
    return f;
  }
  constexpr SettingFacts grouped(const char* name) const {
    SettingFacts f = *this;
    f.group = name;
    return f;
  }
};
constexpr SettingFacts facts(const char* attribute, AttributeRole role, std::int32_t since_version) {
  return {attribute, role, since_version};
}

// What a command that reproduces a configuration passes besides its settings: the --gpus list and the back-end.
struct CommandContext {
  std::string gpus;  // "1,2": the GPU counts the command measures
  bool cuda = true;  // false: --device cpu
};
// The command-line arguments of a grid row, whose options the grid reads together (" --model large"; "" where another
// row's arguments give it).
using ArgumentsOf = std::string (*)(const Configuration&, const CommandContext&);
// What the banner shows of a row where that is not the setting itself (the runs made for the runs asked for).
using BannerValueOf = std::string (*)(const Configuration&);
// A text option's value in the form the setting keeps (NCCL's spelling of a list of algorithms); UsageError naming
// the option and the text otherwise.
using TextOptionParser = std::string (*)(const std::string& text);

// The bounds of a number option (both included).
struct OptionBounds {
  double minimum = 0;
  double maximum = 0;
  const char* unit = "";  // " MB" in the message "--bucket-mb 0: must be from 1e-06 to 1e+06 MB"
};

// Where a member of each part of a Configuration is (C: Configuration, const or not).
template <typename C>
auto& owner_of(C& c, const Configuration*) {
  return c;
}
template <typename C>
auto& owner_of(C& c, const TrainingSettings*) {
  return c.training;
}
template <typename C>
auto& owner_of(C& c, const MlpSpec*) {
  return c.training.model;
}
template <typename C>
auto& owner_of(C& c, const AdamSettings*) {
  return c.training.adam;
}

// A setting reached by its member: `&MlpSpec::dropout` is configuration.training.model.dropout.
template <typename Owner, typename Setting>
struct MemberOf {
  Setting Owner::*member;
  template <typename C>
  auto& operator()(C& configuration) const {
    return owner_of(configuration, static_cast<const Owner*>(nullptr)).*member;
  }
};

// How the command that reproduces a configuration gives a recorded setting its option sets.
enum class Spelling {
  off_default,  // " --option value" where the value is not the option's default
  always,       // always: the command says it (the batch, steps and runs it measures)
};

// A setting the resolver does not decide (the model, batch, GPU count, steps, runs, seed, Adam, NCCL's choices), by
// its member, with its option where one sets it: `.set_by("warmup", "help")` and the columns below. Its default is
// the member's in Configuration (TrainingSettings, MlpSpec, AdamSettings); an integer option is bounded `.within()`,
// a text option read by `.parsed_by()`. The grid's rows (the model, widths, dropout, batch and GPU counts) name the
// option the grid reads (cli/options.cpp: lists, one configuration per value) and their own arguments.
template <typename Owner, typename Setting>
struct RecordedSetting {
  SettingFacts facts;
  MemberOf<Owner, Setting> get;
  const char* option = nullptr;  // without the leading "--"; nullptr: no option sets it
  const char* help = "";         // --help's text
  OptionBounds bounds = {};
  bool in_grid = false;  // the grid reads the option (a list: a configuration per value), not parse_recorded_option
  Spelling spelling = Spelling::off_default;
  // The grid's own arguments (nullptr: " --option value" as `spelling` says; without an option, none where the
  // setting is at its default, where it is not the command cannot reproduce it).
  ArgumentsOf arguments = nullptr;
  TextOptionParser parse_text = nullptr;  // a text option's values; nullptr: the text as it is
  std::string (*offered)() = nullptr;     // the values --help lists after the help (the presets)
  const char* banner = nullptr;           // its word on the banner ("warm-up"); nullptr: not on it
  BannerValueOf banner_value = nullptr;   // what the banner shows; nullptr: the setting

  constexpr RecordedSetting set_by(const char* option_name, const char* option_help) const {
    return with(&RecordedSetting::option, option_name).with(&RecordedSetting::help, option_help);
  }
  constexpr RecordedSetting in_the_grid(const char* option_name, const char* option_help, ArgumentsOf own) const {
    return set_by(option_name, option_help).with(&RecordedSetting::in_grid, true).given_by(own);
  }
  constexpr RecordedSetting given_by(ArgumentsOf own) const { return with(&RecordedSetting::arguments, own); }
  constexpr RecordedSetting within(OptionBounds number_bounds) const {
    return with(&RecordedSetting::bounds, number_bounds);
  }
  constexpr RecordedSetting always_spelled() const { return with(&RecordedSetting::spelling, Spelling::always); }
  constexpr RecordedSetting parsed_by(TextOptionParser parser) const {
    return with(&RecordedSetting::parse_text, parser);
  }
  constexpr RecordedSetting offering(std::string (*values)()) const { return with(&RecordedSetting::offered, values); }
  constexpr RecordedSetting on_banner(const char* word, BannerValueOf shown = nullptr) const {
    return with(&RecordedSetting::banner, word).with(&RecordedSetting::banner_value, shown);
  }

  // This row with one column set (each modifier above is one or two of these).
  template <typename Column, typename Value>
  constexpr RecordedSetting with(Column RecordedSetting::*column, Value value) const {
    RecordedSetting r = *this;
    r.*column = value;
    return r;
  }
};
template <typename Owner, typename Setting>
constexpr RecordedSetting<Owner, Setting> recorded(SettingFacts facts, Setting Owner::*member) {
  return {facts, {member}};
}

// A step option: a StepRequest member the command line sets, resolved (config/resolver.hpp) into a TrainingSettings
// member. Its values are the request type's named_values (a Toggle: auto | on | off), or a number within `bounds`.
// A request and a setting of one type are taken as given unless the resolver has a rule for it.
template <typename Setting, typename Request>
struct StepOption {
  SettingFacts facts;
  Setting TrainingSettings::*setting;
  Request StepRequest::*request;
  const char* option;  // without the leading "--"
  const char* help;    // --help's text; the values' names (and their own help) are added to it
  // Why the CPU fallback refuses this option other than at its default (a Toggle: on), one line after "--option
  // value: "; nullptr where the CPU fallback honours every value.
  const char* cpu_refusal = nullptr;
  OptionBounds bounds = {};

  constexpr StepOption refused_on_cpu(const char* reason) const {
    StepOption o = *this;
    o.cpu_refusal = reason;
    return o;
  }
  constexpr StepOption within(OptionBounds number_bounds) const {
    StepOption o = *this;
    o.bounds = number_bounds;
    return o;
  }
};
template <typename Setting, typename Request>
constexpr StepOption<Setting, Request> step_option(SettingFacts facts, Setting TrainingSettings::*setting,
                                                   Request StepRequest::*request, const char* option,
                                                   const char* help) {
  return {facts, setting, request, option, help};
}

}  // namespace mgpu
