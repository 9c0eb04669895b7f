// Purpose: the one table of a configuration's settings (its kinds of row: setting_rows.hpp): a row per setting with
// every face it has: its attribute in the results file, where it lives in Configuration (and in StepRequest for a
// step option), its command-line option, help, default (the member's) and values (the value type's named_values),
// when it applies, its role in pairing, the schema version that added it, whether --X auto decides it per batch,
// whether the math check's reference step depends on it, and its word on the banner. From it come the command line's
// options and their parsing (setting_options.hpp, read by cli/options.cpp and the analyzer's predict), the results
// file's visit list and roles (results/configuration_attributes.hpp), the banner, the answer's settings decided per
// batch, the math check's cache key and the command that reproduces a configuration (reproducing_command.hpp);
// docs/architecture.md says what a new setting costs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "config/configuration.hpp"
#include "config/option_text.hpp"
#include "config/setting_rows.hpp"
#include "config/setting_values.hpp"
#include "config/step_request.hpp"

namespace mgpu {

// The grid's arguments (settings_table.cpp): --model or --layers, --dropout where it is not the preset's, and the
// command's --gpus and back-end.
std::string model_arguments(const Configuration& c, const CommandContext&);
std::string dropout_arguments(const Configuration& c, const CommandContext&);
std::string gpus_and_device_arguments(const Configuration& c, const CommandContext& context);
// Given by the arguments of another row (the widths by --model or --layers) or by the job (the trial).
std::string given_elsewhere(const Configuration& c, const CommandContext&);
// The runs a configuration makes, which the banner shows for the runs asked for (timing interleaved adds its own).
std::string runs_made_text(const Configuration& c);

// Upper bounds keep every count, product and MPI message size far inside 32 bits: 100,000 steps of 7 values per
// rank are 5.6 MB a run, and the study itself uses 110 steps and 50 runs.
inline constexpr double kMaxSteps = 100000;
inline constexpr double kMaxRuns = 100000;
inline constexpr double kMaxBatch = 1 << 24;
inline constexpr double kMaxRanks = 1 << 20;

// ---- The table. Its order is the results file's visit order, the banner's and the labels' order, and the order of
// each role's attributes in the pairing identities. A row's since_version never changes; a new row takes the next
// version (results_schema::kVersion follows the newest).
inline constexpr AttributeRole kScaled = AttributeRole::scaled;
inline constexpr AttributeRole kCompared = AttributeRole::compared;
inline constexpr AttributeRole kSetting = AttributeRole::setting;
inline constexpr AttributeRole kCondition = AttributeRole::condition;
inline constexpr char kNcclGroup[] = "nccl";  // NCCL's choices: compare --ignore-nccl-settings, the label's "nccl a/b"

inline constexpr auto kSettingsTable = std::make_tuple(
    // What the model computes and on how many GPUs: the grid.
    recorded(facts("model", kScaled, 1), &MlpSpec::name)
        .in_the_grid("model", "preset MLPs, comma-separated", model_arguments)
        .offering(preset_list_text),
    recorded(facts("layer_widths", kScaled, 1).in_math_reference(), &MlpSpec::widths)
        .in_the_grid("layers", "any other MLP by its widths, e.g. 50,256,128,64,3 (exclusive with --model)",
                     given_elsewhere),
    recorded(facts("dropout", kScaled, 1).in_math_reference(), &MlpSpec::dropout)
        .in_the_grid("dropout", "drop probability after each hidden layer (default: the preset's; 0 for --layers)",
                     dropout_arguments),
    recorded(facts("global_batch", kScaled, 1).in_math_reference(), &TrainingSettings::global_batch)
        .in_the_grid("batch", "global batches, comma-separated, each split evenly across the ranks; default 32",
                     nullptr)
        .within({1, kMaxBatch})
        .always_spelled(),
    recorded(facts("ranks", kCompared, 1), &Configuration::gpus)
        .in_the_grid("gpus",
                     "GPU counts (ranks) per configuration, comma-separated, e.g. 1,2; default: 1 and all ranks (1 "
                     "alone with one rank)",
                     gpus_and_device_arguments)
        .within({1, kMaxRanks}),
    // Trials of one configuration must pair as trials (stats::build_trial_scaling), so no identity holds it; each
    // trial is a group of its own name.
    recorded(facts("trial", kCondition, 9), &Configuration::trial).given_by(given_elsewhere),
    // The step options.
    // A version-1 file lacks it: its runs were not graphs.
    step_option(facts("graph", kScaled, 2), &TrainingSettings::graph, &StepRequest::graph, "graph",
                "replay each step as one CUDA graph, NCCL included (auto: on for CUDA)")
        .refused_on_cpu("CUDA graphs need the CUDA back-end (device is cpu)"),
    // How the gradients are reduced: meaningless on 1 GPU (recorded there as off / n/a / fp32), so compared only.
    step_option(facts("overlap", kCompared, 2).per_batch(), &TrainingSettings::overlap, &StepRequest::overlap,
                "overlap",
                "reduce gradients in buckets during backward, Adam per reduced bucket (auto: on with 4 or more GPUs at "
                "a local batch >= 1024, deferred order, see docs)")
        .refused_on_cpu("the CPU fallback reduces after backward"),
    step_option(facts("overlap_order", kCompared, 5).applying(Applies::with_overlap), &TrainingSettings::overlap_order,
                &StepRequest::overlap_order, "overlap-order",
                "with --overlap on, when backward forms the weight gradients"),
    step_option(facts("bucket_mb", kCompared, 2).applying(Applies::with_overlap), &TrainingSettings::bucket_mb,
                &StepRequest::bucket_mb, "bucket-mb",
                "all-reduce bucket cap in MB with --overlap on (the bucket reduced first (layerwise) or last "
                "(deferred): 1 MB)")
        .within({1e-6, 1e6, " MB"}),  // smaller than a float or larger than any GPU's memory: a typo
    step_option(facts("overlap_update", kCompared, 12).applying(Applies::with_overlap),
                &TrainingSettings::overlap_update, &StepRequest::overlap_update, "overlap-update",
                "with --overlap on, when Adam runs"),
    // With overlap, the SMs backward's GEMMs are chosen for beside the all-reduce (docs/measurement.md).
    step_option(facts("overlap_sm_target", kCompared, 14).applying(Applies::with_overlap),
                &TrainingSettings::overlap_sm_target, &StepRequest::overlap_sm_target, "overlap-sm-target",
                "with --overlap on, the SMs backward's GEMMs are chosen for, beside the all-reduce (0: every SM)")
        .refused_on_cpu("the CPU fallback has no GEMM algorithms to choose")
        .within({0, 1024}),
    // The reverse: a 1-GPU-only way of running the step (recorded off with more GPUs), so a 1-GPU baseline run either
    // way still pairs with its N-GPU configurations.
    step_option(
        facts("fused_optimizer", kCompared, 4).per_batch(), &TrainingSettings::fused_optimizer,
        &StepRequest::fuse_optimizer, "fuse-optimizer",
        "weight gradients computed inside Adam, one rank fp32 only (auto: on up to a local batch of 1024 and dense "
        "weights x local batch <= 2e9)")
        .refused_on_cpu("the CPU fallback has no fused optimizer"),
    step_option(facts("optimizer_sharding", kCompared, 11), &TrainingSettings::optimizer_sharding,
                &StepRequest::optimizer_sharding, "optimizer-sharding",
                "> 1 rank, reduce-scatter the gradient, Adam on each rank's 1/N of the parameters, all-gather them "
                "(ZeRO-1; auto: off, see docs)")
        .refused_on_cpu("the CPU fallback updates every parameter on every rank"),
    step_option(facts("grad_dtype", kCompared, 2), &TrainingSettings::grad_dtype, &StepRequest::grad_dtype,
                "grad-dtype",
                "element type of the gradient all-reduce (bf16: cast before, fp32 again for Adam; > 1 rank)")
        .refused_on_cpu("the CPU fallback reduces fp32 gradients only"),
    // What ran, kept apart in compare; meaningless on 1 GPU, so never in the scaling identity.
    step_option(facts("nccl_max_ctas", kCompared, 14), &TrainingSettings::nccl_max_ctas, &StepRequest::nccl_max_ctas,
                "nccl-max-ctas", "> 1 rank, at most this many SMs for NCCL's kernels (0: NCCL's choice)")
        .refused_on_cpu("the CPU fallback has no NCCL")
        .within({0, 64}),  // NCCL's most channels
    step_option(facts("precision", kScaled, 1).in_math_reference(), &TrainingSettings::precision,
                &StepRequest::precision, "precision", "GEMM operands (fp32 accumulation, weights and Adam)")
        .refused_on_cpu("the CPU fallback is fp32 only"),
    step_option(facts("accumulate_steps", kScaled, 2).in_math_reference(), &TrainingSettings::accumulate_steps,
                &StepRequest::accumulate_steps, "accumulate",
                "K: every step adds its gradient; every K-th step all-reduces and updates with the mean of the K (1: "
                "every step)")
        .within({1, kMaxAccumulateSteps}),
    step_option(facts("timing", kScaled, 2), &TrainingSettings::timing, &StepRequest::timing, "timing",
                "how the steps are timed"),
    // Like gemm_tuning below: how the step's kernels were chosen pairs nothing apart (a comparison of two builds may be
    // about it); what set-up chose is the condition step_kernel_chosen (results_schema.hpp).
    step_option(facts("step_kernel", kSetting, 17).applying(Applies::with_own_gemms), &TrainingSettings::step_kernel,
                &StepRequest::step_kernel, "step-kernel", "how a one-GPU fp32 step runs")
        .refused_on_cpu("the CPU fallback runs its own step"),
    // How the GEMM algorithms were chosen pairs nothing apart: it is what a comparison of two builds may well be
    // about. It means something only where this program chose them (CUDA; the peer's framework chooses its own).
    step_option(facts("gemm_tuning", kSetting, 6).applying(Applies::with_own_gemms), &TrainingSettings::gemm_tuning,
                &StepRequest::gemm_tuning, "gemm-tuning", "how each GEMM shape's algorithm is chosen"),
    // How it is trained and timed, on any GPU count.
    recorded(facts("warmup_steps", kScaled, 1), &TrainingSettings::warmup_steps)
        .set_by("warmup", "warm-up steps per run (recorded and flagged)")
        .within({0, kMaxSteps})
        .always_spelled()
        .on_banner("warm-up"),
    recorded(facts("measured_steps", kScaled, 1), &TrainingSettings::measured_steps)
        .set_by("steps", "measured steps per run")
        .within({1, kMaxSteps})
        .always_spelled()
        .on_banner("steps"),
    recorded(facts("runs_requested", kSetting, 1), &Configuration::runs_requested)
        .set_by("runs",
                "runs per configuration (fresh initialisation each): the most a configuration measures; given, "
                "exactly these unless --max-noise is given too or --max-time ends them")
        .within({1, kMaxRuns})
        .always_spelled()
        .on_banner("runs", runs_made_text),
    recorded(facts("seed", kScaled, 1).in_math_reference(), &TrainingSettings::seed)
        .set_by("seed", "seed of data, initialisation and dropout")
        .on_banner("seed"),
    recorded(facts("adam_learning_rate", kScaled, 1).in_math_reference(), &AdamSettings::learning_rate),
    recorded(facts("adam_beta1", kScaled, 1).in_math_reference(), &AdamSettings::beta1),
    recorded(facts("adam_beta2", kScaled, 1).in_math_reference(), &AdamSettings::beta2),
    recorded(facts("adam_epsilon", kScaled, 1).in_math_reference(), &AdamSettings::epsilon),
    // NCCL's choices pair N-GPU configurations with each other, never with their baseline (recorded as in effect:
    // the option's, else the environment's).
    recorded(facts("nccl_algo", kCompared, 1).grouped(kNcclGroup), &Configuration::nccl_algo)
        .set_by("nccl-algo", "NCCL_ALGO for the all-reduce, e.g. tree or ring (default: NCCL's)")
        .parsed_by(nccl_algo_env_value),
    recorded(facts("nccl_proto", kCompared, 1).grouped(kNcclGroup), &Configuration::nccl_proto)
        .set_by("nccl-proto", "NCCL_PROTO, e.g. simple, ll, ll128 (default: NCCL's)")
        .parsed_by(nccl_proto_env_value));

// ---- Walking the table.

template <typename Row>
struct IsStepOption : std::false_type {};
template <typename Setting, typename Request>
struct IsStepOption<StepOption<Setting, Request>> : std::true_type {};
template <typename Row>
inline constexpr bool kIsStepOption = IsStepOption<std::decay_t<Row>>::value;

using SettingsTable = std::decay_t<decltype(kSettingsTable)>;

// visit(row) for every row of `table` (the settings table, or a test's with a row of its own), in order.
template <typename Table, typename Visit>
void for_each_row_of(const Table& table, Visit&& visit) {
  std::apply([&](const auto&... row) { (visit(row), ...); }, table);
}
// visit(row) for every row, in order.
template <typename Visit>
void for_each_setting_row(Visit&& visit) {
  for_each_row_of(kSettingsTable, visit);
}
// visit(row) for every step option, in order.
template <typename Visit>
void for_each_step_option(Visit&& visit) {
  for_each_setting_row([&](const auto& row) {
    if constexpr (kIsStepOption<decltype(row)>) visit(row);
  });
}

// The row's setting in `configuration` (const or not).
template <typename Row, typename C>
auto& setting_of(const Row& row, C& configuration) {
  if constexpr (kIsStepOption<Row>) {
    return configuration.training.*row.setting;
  } else {
    return row.get(configuration);
  }
}

// Whether a setting that applies `where` means something in `configuration`; `own_gemms`: this program chose its
// GEMMs (Applies::with_own_gemms).
inline bool setting_applies(Applies where, const Configuration& configuration, bool own_gemms) {
  switch (where) {
    case Applies::with_overlap:
      return configuration.training.overlap;
    case Applies::with_own_gemms:
      return own_gemms;
    case Applies::always:
      break;
  }
  return true;
}

// Every recorded setting as visit(attribute, setting, applies); C: Configuration, const or not. A reader restores each
// setting as it is visited and decides where a setting applies from those restored before it, so the order is
// explicit: first every setting that always applies (overlap among them), then those that apply only somewhere, each
// in the table's order. The results writer and reader walk this list (results_schema.hpp).
template <typename C, typename Visit, typename Table = SettingsTable>
void for_each_recorded_setting(C& configuration, bool own_gemms, Visit&& visit, const Table& table = kSettingsTable) {
  for (const bool always : {true, false}) {
    for_each_row_of(table, [&](const auto& row) {
      if ((row.facts.applies == Applies::always) != always) return;
      visit(row.facts.attribute, setting_of(row, configuration),
            setting_applies(row.facts.applies, configuration, own_gemms));
    });
  }
}

// Every row's facts, in the table's order.
const std::vector<SettingFacts>& settings_facts();
// The row of recorded setting `attribute`; nullptr for a name the table lacks.
const SettingFacts* find_setting_facts(std::string_view attribute);

// The attribute of the row whose setting is `member` (nullptr for a member no row records):
// attribute_of(&TrainingSettings::timing) is "timing", attribute_of(&MlpSpec::dropout) "dropout".
template <typename Owner, typename Setting>
const char* attribute_of(Setting Owner::*member) {
  const char* found = nullptr;
  for_each_setting_row([&](const auto& row) {
    using Row = std::decay_t<decltype(row)>;
    if constexpr (kIsStepOption<Row>) {
      if constexpr (std::is_same_v<decltype(row.setting), Setting Owner::*>)
        if (row.setting == member) found = row.facts.attribute;
    } else if constexpr (std::is_same_v<decltype(row.get), MemberOf<Owner, Setting>>) {
      if (row.get.member == member) found = row.facts.attribute;
    }
  });
  return found;
}

// Whether recorded setting `attribute` is decided per batch (SettingFacts::decided_per_batch) or exists only with
// overlap on (overlap_order, bucket_mb, overlap_update).
bool decided_per_batch(std::string_view attribute);
bool applies_only_with_overlap(std::string_view attribute);

// The text of the command line's default of a step option that always applies and is taken as given ("interleaved"
// for timing), where the default request resolves to it; "" for any other attribute.
std::string command_line_default_text(std::string_view attribute);

// The text of the request's value of a step option as the command line writes it ("auto", "per-bucket", "8").
template <typename Row>
std::string request_text(const Row& row, const StepRequest& request) {
  return setting_text(request.*row.request);
}

// The banner's settings after the grid's (model, device, ranks, batch): ", warm-up 10, steps 100, runs 62, seed 1",
// every row with a banner word, in the table's order.
template <typename Table = SettingsTable>
std::string banner_settings_text(const Configuration& configuration, const Table& table = kSettingsTable) {
  std::string text;
  for_each_row_of(table, [&](const auto& row) {
    if constexpr (!kIsStepOption<decltype(row)>) {
      if (row.banner == nullptr) return;
      text += ", " + std::string(row.banner) + " " +
              (row.banner_value != nullptr ? row.banner_value(configuration)
                                           : setting_text(setting_of(row, configuration)));
    }
  });
  return text;
}

// The arguments that give recorded setting `row` of `configuration` on a command line (" --warmup 10"; "" where the
// command line's default or another row's arguments give it). Without an option, "" and, where the setting is not at
// its default, its attribute added to `unreproduced`.
template <typename Row>
std::string recorded_arguments(const Row& row, const Configuration& configuration, const CommandContext& context,
                               std::vector<std::string>& unreproduced) {
  if (row.arguments != nullptr) return row.arguments(configuration, context);
  const Configuration defaults;
  const std::string value = setting_text(setting_of(row, configuration));
  const bool at_default = value == setting_text(setting_of(row, defaults));
  if (row.option == nullptr) {
    if (!at_default) unreproduced.push_back(row.facts.attribute);
    return "";
  }
  return at_default && row.spelling == Spelling::off_default ? "" : " --" + std::string(row.option) + " " + value;
}

// The banner's step line: every step option that applies, as attribute=value in the table's order ("graph=on
// overlap=off ... timing=interleaved"), the words of the results file and the labels.
std::string step_settings_text(const Configuration& configuration, bool own_gemms);

// The math check's cache key: every setting its reference step depends on, as attribute=value.
std::string math_reference_text(const TrainingSettings& settings);

}  // namespace mgpu
