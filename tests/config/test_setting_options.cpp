// Purpose: tests of a row's command-line option (setting_options.hpp): declared with its help, values and default,
// read within its bounds; and that a new recorded setting needs nothing but its row: a table with one row more offers
// its option, parses it, prints it on the banner, visits its attribute for the results file and spells it in the
// command that reproduces a configuration.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "config/setting_options.hpp"

namespace mgpu {
namespace {

namespace po = boost::program_options;

po::variables_map parsed(const po::options_description& description, std::vector<const char*> words) {
  words.insert(words.begin(), "mgpu_bench");
  po::variables_map vm;
  po::store(po::parse_command_line(static_cast<int>(words.size()), words.data(), description), vm);
  po::notify(vm);
  return vm;
}

std::string message_of(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// A setting no row records yet (the runs a configuration makes), as a new row would add it: a member, its row.
constexpr auto kNewRow = recorded(facts("new_setting", kScaled, 99), &TrainingSettings::runs)
                             .set_by("new-setting", "a setting the table has just been given")
                             .within({1, 9})
                             .on_banner("new");
const auto kTableWithNewRow = std::tuple_cat(kSettingsTable, std::make_tuple(kNewRow));

TEST(SettingOptions, ANewRecordedSettingNeedsOnlyItsRow) {
  po::options_description description;
  describe_setting_options(description, kTableWithNewRow);
  // The command line offers it, with its help and its member's default.
  const po::option_description* declared = description.find_nothrow("new-setting", false);
  ASSERT_NE(declared, nullptr);
  EXPECT_EQ(declared->description(), "a setting the table has just been given");
  std::ostringstream help;
  help << description;
  EXPECT_NE(help.str().find("--new-setting arg (=1)"), std::string::npos) << help.str();
  // It is read into the configuration, within its bounds.
  Configuration configuration;
  parse_recorded_option(kNewRow, parsed(description, {"--new-setting", "7"}), configuration);
  EXPECT_EQ(configuration.training.runs, 7);
  Configuration refused;
  EXPECT_EQ(message_of([&] {
              parse_recorded_option(kNewRow, parsed(description, {"--new-setting", "10"}), refused);
            }),
            "--new-setting 10: must be from 1 to 9");
  // The banner names it, after the table's other banner words.
  const std::string banner = banner_settings_text(configuration, kTableWithNewRow);
  EXPECT_EQ(banner.substr(banner.size() - 7), ", new 7");
  // The results file gets its attribute (the writer and the reader walk this visit).
  int visits = 0;
  for_each_recorded_setting(
      configuration, true,
      [&](const char* name, const auto& value, bool applies) {
        if (std::string(name) != "new_setting") return;
        ++visits;
        EXPECT_EQ(setting_text(value), "7");
        EXPECT_TRUE(applies);
      },
      kTableWithNewRow);
  EXPECT_EQ(visits, 1);
  // The reproducing command spells it where it is off its default.
  std::vector<std::string> unreproduced;
  EXPECT_EQ(recorded_arguments(kNewRow, configuration, {"1", true}, unreproduced), " --new-setting 7");
  EXPECT_EQ(recorded_arguments(kNewRow, Configuration{}, {"1", true}, unreproduced), "");
  EXPECT_TRUE(unreproduced.empty());
}

// Every recorded setting an option sets is declared from its row, at its member's default; the grid's lists and a text
// without a default are declared without one.
TEST(SettingOptions, RecordedSettingsAreDeclaredAtTheirMembersDefaults) {
  po::options_description description;
  describe_setting_options(description);
  const po::variables_map defaults = parsed(description, {});
  EXPECT_EQ(defaults["warmup"].as<long long>(), TrainingSettings{}.warmup_steps);
  EXPECT_EQ(defaults["steps"].as<long long>(), TrainingSettings{}.measured_steps);
  EXPECT_EQ(defaults["runs"].as<long long>(), Configuration{}.runs_requested);
  EXPECT_EQ(defaults["seed"].as<std::string>(), "1");
  EXPECT_EQ(defaults["timing"].as<std::string>(), "interleaved");  // a step option: the command line's default
  for (const char* without : {"model", "layers", "dropout", "batch", "gpus", "nccl-algo", "nccl-proto"}) {
    EXPECT_NE(description.find_nothrow(without, false), nullptr) << without;
    EXPECT_EQ(defaults.count(without), 0u) << without;
  }
  Configuration configuration;
  for_each_setting_row([&](const auto& row) {
    if constexpr (!kIsStepOption<decltype(row)>) parse_recorded_option(row, defaults, configuration);
  });
  EXPECT_EQ(setting_text(configuration.training.seed), "1");
  EXPECT_EQ(configuration.nccl_algo, kNcclDefault);
}

// A text option is read by its row's parser (NCCL's spelling), a 64-bit number whole, each refusal naming the option.
TEST(SettingOptions, TextAndWideOptionsAreReadByTheirRows) {
  po::options_description description;
  describe_setting_options(description);
  Configuration configuration;
  const po::variables_map vm = parsed(description, {"--nccl-algo", "tree,ring", "--seed", "18446744073709551615"});
  for_each_setting_row([&](const auto& row) {
    if constexpr (!kIsStepOption<decltype(row)>) parse_recorded_option(row, vm, configuration);
  });
  EXPECT_EQ(configuration.nccl_algo, "Tree,Ring");
  EXPECT_EQ(configuration.nccl_proto, kNcclDefault);
  EXPECT_EQ(configuration.training.seed, 18446744073709551615ull);
  const po::variables_map bad = parsed(description, {"--seed", "18446744073709551616"});
  EXPECT_EQ(message_of([&] {
              with_option_row("seed", [&](const auto& row) {
                if constexpr (!kIsStepOption<decltype(row)>) parse_recorded_option(row, bad, configuration);
              });
            }),
            "--seed '18446744073709551616': must be a non-negative 64-bit integer");
}

// The grid's lists are read within their rows' bounds; a named type's help lists the values the command line offers.
TEST(SettingOptions, GridListsAndNamedValues) {
  EXPECT_EQ(parse_number_list_option("batch", "8,16"), (std::vector<int>{8, 16}));
  EXPECT_EQ(message_of([] { parse_number_list_option("batch", "16777217"); }),
            "--batch 16777217: must be from 1 to 16777216");
  EXPECT_EQ(message_of([] { parse_number_list_option("gpus", "0"); }), "--gpus 0: must be from 1 to 1048576");
  EXPECT_EQ(named_option_help<Toggle>("help"), "auto | on | off: help");
  EXPECT_EQ(named_option_help<OverlapUpdate>("when"),
            "when; per-bucket: Adam on each bucket as soon as it is reduced | after-last: Adam on every parameter once "
            "the last bucket is reduced");
  EXPECT_EQ(message_of([] { parse_named<GemmTuning>("gemm-tuning", "plan"); }),
            "--gemm-tuning 'plan': choose step or alone");
}

}  // namespace
}  // namespace mgpu
