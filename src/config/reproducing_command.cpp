// Purpose: reproducing_request and reproducing_command (reproducing_command.hpp).
#include "config/reproducing_command.hpp"

#include "config/resolver.hpp"
#include "platform/error.hpp"

namespace mgpu {
namespace {

// The request that asks for `setting` explicitly: a bool as on or off, any other as it is.
template <typename Request, typename Setting>
Request explicit_request_of(const Setting& setting) {
  if constexpr (std::is_same_v<Request, Toggle>) {
    return setting ? Toggle::on : Toggle::off;
  } else {
    return setting;
  }
}

// Whether the command line can ask for `value` (GemmTuning::plan: only through --gemm-plan).
template <typename Request>
bool on_command_line(const Request& value) {
  if constexpr (kNamedSetting<Request>) {
    return find_setting_value<Request>(setting_name(value), true).has_value();
  } else {
    return true;
  }
}

// Whether `request` resolves to the configuration's step settings, each that applies, but those in `left_out`.
bool resolves_to(const StepRequest& request, const Configuration& configuration, bool cuda,
                 const std::vector<std::string>& left_out) {
  Configuration resolved = configuration;
  try {
    resolve_step(request, cuda, configuration.gpus, resolved.training);
  } catch (const UsageError&) {
    return false;
  }
  bool same = true;
  for_each_step_option([&](const auto& row) {
    if (!setting_applies(row.facts.applies, configuration, cuda)) return;
    for (const std::string& attribute : left_out)
      if (attribute == row.facts.attribute) return;
    same = same && setting_of(row, resolved) == setting_of(row, configuration);
  });
  return same;
}

}  // namespace

StepRequest reproducing_request(const Configuration& configuration, bool cuda, std::vector<std::string>& unreproduced) {
  StepRequest asked;  // the command line's defaults, then every setting that applies as it was
  std::vector<std::string> left_out;
  for_each_step_option([&](const auto& row) {
    using Request = std::decay_t<decltype(asked.*row.request)>;
    if (!setting_applies(row.facts.applies, configuration, cuda)) return;
    const Request wanted = explicit_request_of<Request>(setting_of(row, configuration));
    if (on_command_line(wanted))
      asked.*row.request = wanted;
    else
      left_out.push_back(row.facts.attribute);
  });
  if (!resolves_to(asked, configuration, cuda, left_out)) {
    for_each_step_option([&](const auto& row) { unreproduced.push_back(row.facts.attribute); });
    return asked;
  }
  unreproduced.insert(unreproduced.end(), left_out.begin(), left_out.end());
  // The fewest options: each back at its default where the rest still resolve to the same step.
  for_each_step_option([&](const auto& row) {
    StepRequest fewer = asked;
    fewer.*row.request = StepRequest{}.*row.request;
    if (resolves_to(fewer, configuration, cuda, left_out)) asked = fewer;
  });
  return asked;
}

ReproducingCommand reproducing_command(const Configuration& configuration, const CommandContext& context) {
  ReproducingCommand command;
  const StepRequest request = reproducing_request(configuration, context.cuda, command.unreproduced);
  const StepRequest defaults;
  for_each_setting_row([&](const auto& row) {
    if constexpr (kIsStepOption<decltype(row)>) {
      if (!(request.*row.request == defaults.*row.request))
        command.arguments += " --" + std::string(row.option) + " " + request_text(row, request);
    } else {
      command.arguments += recorded_arguments(row, configuration, context, command.unreproduced);
    }
  });
  return command;
}

Configuration one_gpu_baseline(const Configuration& scaled, bool cuda) {
  StepRequest request;
  for_each_step_option([&](const auto& row) {
    using Request = std::decay_t<decltype(request.*row.request)>;
    if (row.facts.role == AttributeRole::scaled)
      request.*row.request = explicit_request_of<Request>(setting_of(row, scaled));
  });
  Configuration baseline = scaled;
  // What keeps N-GPU configurations apart only (the GPU count, NCCL's choices) is what one GPU runs by default.
  const Configuration defaults;
  for_each_setting_row([&](const auto& row) {
    if constexpr (!kIsStepOption<decltype(row)>)
      if (row.facts.role == AttributeRole::compared) setting_of(row, baseline) = setting_of(row, defaults);
  });
  baseline.gpus = 1;
  TrainingSettings one_gpu = scaled.training;
  try {
    resolve_step(request, cuda, 1, one_gpu);
    baseline.training = one_gpu;
  } catch (const UsageError&) {
    // No request gives it (another program's settings): the command made of it says which it cannot give.
  }
  return baseline;
}

}  // namespace mgpu
