// Purpose: the one table of a configuration's settings: a row per setting with every face it has: its attribute in the
// results file, where it lives in Configuration (and in StepRequest for a step option), its command-line option, help
// and values (the value type's named_values), when it applies, its role in pairing, the schema version that added it,
// whether --X auto decides it per batch, and whether the math check's reference step depends on it. From it come the
// command line's step options (cli/options.cpp), the results file's visit list and roles (results_schema.hpp), the
// banner's step line, the answer's settings decided per batch, the math check's cache key and the command that
// reproduces a configuration (reproducing_command.hpp); docs/architecture.md says what a new option costs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "config/configuration.hpp"
#include "config/setting_values.hpp"
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
};
constexpr SettingFacts facts(const char* attribute, AttributeRole role, std::int32_t since_version) {
  return {attribute, role, since_version};
}

// What a command that reproduces a configuration passes besides its settings: the --gpus list and the back-end.
struct CommandContext {
  std::string gpus;  // "1,2": the GPU counts the command measures
  bool cuda = true;  // false: --device cpu
};
// The command-line arguments that give a setting that is no step option (" --warmup 10"; "" where the command
// line's default gives it or another row's arguments do).
using ArgumentsOf = std::string (*)(const Configuration&, const CommandContext&);

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

// A setting the resolver does not decide (the model, batch, GPU count, steps, runs, seed, Adam), by its member;
// `arguments` nullptr where no option sets it.
template <typename Owner, typename Setting>
struct RecordedSetting {
  SettingFacts facts;
  MemberOf<Owner, Setting> get;
  ArgumentsOf arguments;
};
template <typename Owner, typename Setting>
constexpr RecordedSetting<Owner, Setting> recorded(SettingFacts facts, Setting Owner::*member, ArgumentsOf arguments) {
  return {facts, {member}, arguments};
}

// The bounds of a number option (both included).
struct OptionBounds {
  double minimum = 0;
  double maximum = 0;
  const char* unit = "";  // " MB" in the message "--bucket-mb 0: must be from 1e-06 to 1e+06 MB"
};

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

// The arguments of the rows that are no step options (settings_table.cpp).
std::string model_arguments(const Configuration& c, const CommandContext&);
std::string dropout_arguments(const Configuration& c, const CommandContext&);
std::string batch_arguments(const Configuration& c, const CommandContext&);
std::string gpus_and_device_arguments(const Configuration& c, const CommandContext& context);
std::string warmup_arguments(const Configuration& c, const CommandContext&);
std::string steps_arguments(const Configuration& c, const CommandContext&);
std::string runs_arguments(const Configuration& c, const CommandContext&);
std::string seed_arguments(const Configuration& c, const CommandContext&);
// Given by the arguments of another row (the widths by --model or --layers) or by the job (the trial).
std::string given_elsewhere(const Configuration& c, const CommandContext&);

// ---- The table. Its order is the results file's visit order, the banner's and the labels' order, and the order of
// each role's attributes in the pairing identities. A row's since_version never changes; a new row takes the next
// version (results_schema::kVersion follows the newest).
inline constexpr AttributeRole kScaled = AttributeRole::scaled;
inline constexpr AttributeRole kCompared = AttributeRole::compared;
inline constexpr AttributeRole kSetting = AttributeRole::setting;
inline constexpr AttributeRole kCondition = AttributeRole::condition;

inline constexpr auto kSettingsTable = std::make_tuple(
    // What the model computes and on how many GPUs.
    recorded(facts("model", kScaled, 1), &MlpSpec::name, model_arguments),
    recorded(facts("layer_widths", kScaled, 1).in_math_reference(), &MlpSpec::widths, given_elsewhere),
    recorded(facts("dropout", kScaled, 1).in_math_reference(), &MlpSpec::dropout, dropout_arguments),
    recorded(facts("global_batch", kScaled, 1).in_math_reference(), &TrainingSettings::global_batch, batch_arguments),
    recorded(facts("ranks", kCompared, 1), &Configuration::gpus, gpus_and_device_arguments),
    // Trials of one configuration must pair as trials (stats::build_trial_scaling), so no identity holds it; each
    // trial is a group of its own name.
    recorded(facts("trial", kCondition, 9), &Configuration::trial, given_elsewhere),
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
        "weight gradients computed inside Adam, one rank fp32 only (auto: on where dense weights x local batch <= 1e9)")
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
    recorded(facts("warmup_steps", kScaled, 1), &TrainingSettings::warmup_steps, warmup_arguments),
    recorded(facts("measured_steps", kScaled, 1), &TrainingSettings::measured_steps, steps_arguments),
    recorded(facts("runs_requested", kSetting, 1), &Configuration::runs_requested, runs_arguments),
    recorded(facts("seed", kScaled, 1).in_math_reference(), &TrainingSettings::seed, seed_arguments),
    recorded(facts("adam_learning_rate", kScaled, 1).in_math_reference(), &AdamSettings::learning_rate, nullptr),
    recorded(facts("adam_beta1", kScaled, 1).in_math_reference(), &AdamSettings::beta1, nullptr),
    recorded(facts("adam_beta2", kScaled, 1).in_math_reference(), &AdamSettings::beta2, nullptr),
    recorded(facts("adam_epsilon", kScaled, 1).in_math_reference(), &AdamSettings::epsilon, nullptr));

// ---- Walking the table.

template <typename Row>
struct IsStepOption : std::false_type {};
template <typename Setting, typename Request>
struct IsStepOption<StepOption<Setting, Request>> : std::true_type {};
template <typename Row>
inline constexpr bool kIsStepOption = IsStepOption<std::decay_t<Row>>::value;

// visit(row) for every row, in order.
template <typename Visit>
void for_each_setting_row(Visit&& visit) {
  std::apply([&](const auto&... row) { (visit(row), ...); }, kSettingsTable);
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

// Every recorded setting as visit(attribute, setting, applies), in the table's order; C: Configuration, const or not.
// A reader restores each setting as it is visited, so `applies` is decided from the settings before it (overlap
// before what exists only with it). The results writer and reader walk this list (results_schema.hpp).
template <typename C, typename Visit>
void for_each_recorded_setting(C& configuration, bool own_gemms, Visit&& visit) {
  for_each_setting_row([&](const auto& row) {
    visit(row.facts.attribute, setting_of(row, configuration),
          setting_applies(row.facts.applies, configuration, own_gemms));
  });
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

// The banner's step line: every step option that applies, as attribute=value in the table's order ("graph=on
// overlap=off ... timing=interleaved"), the words of the results file and the labels.
std::string step_settings_text(const Configuration& configuration, bool own_gemms);

// The math check's cache key: every setting its reference step depends on, as attribute=value.
std::string math_reference_text(const TrainingSettings& settings);

}  // namespace mgpu
