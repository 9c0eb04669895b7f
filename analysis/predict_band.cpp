// Purpose: the error band of predicted speedups (predict_band.hpp).
#include "predict_band.hpp"

#include "platform/error.hpp"
#include "results/attribute_text.hpp"

namespace mgpu::analysis {

ErrorBand error_band_of(bool cluster, const std::vector<stats::PublishedTable>& published,
                        const std::string& check_path, const CheckSummary* check) {
  ErrorBand band;
  if (cluster) band.allreduce = stats::carried_allreduce_error(published);
  if (band.allreduce)
    for (const stats::PublishedTable& table : published) {
      band.allreduce_judged_on += (band.allreduce_judged_on.empty() ? "" : ", ") + table.name + " (" +
                                  (table.used_to_fit ? "in-sample, " : "held out, ") +
                                  std::to_string(table.rows.size()) + " rows)";
      band.allreduce_judged += int(table.rows.size());
    }
  if (check != nullptr && check->speedups > 0) {
    band.speedup = check->worst_abs_speedup_error;
    band.speedup_judged = check->speedups;
    band.speedup_judged_on = "--check " + check_path + " (" + std::to_string(check->speedups) + " speedups)";
  }
  return band;
}

void add_error_band(std::vector<PredictedConfiguration>& grid, const stats::StepModel& model, const MlpSpec& mlp,
                    Precision precision, const ErrorBand& band) {
  if (!band.any()) return;
  const double a = band.allreduce.value_or(0), s = band.speedup.value_or(0);
  for (const double e : {a, s})
    if (!(e >= 0 && e < 1))
      throw UsageError("error band: a relative error of " + shortest_double_text(e) +
                       " leaves the speedup no upper end (expected from 0 to below 1)");
  stats::StepModel slow = model, fast = model;
  slow.scale_modelled_allreduce(1 / (1 - a));
  fast.scale_modelled_allreduce(1 / (1 + a));
  for (PredictedConfiguration& p : grid) {
    if (p.gpus == 1) continue;
    const auto step_ms = [&](const stats::StepModel& m, int gpus) {
      return m.predict(stats::default_gpu_configuration(mlp, gpus, p.global_batch, precision)).step_ms;
    };
    const double one_ms = step_ms(model, 1);  // one GPU reduces nothing: the band's ends share it
    p.speedup_low = one_ms / step_ms(slow, p.gpus) / (1 + s);
    p.speedup_high = one_ms / step_ms(fast, p.gpus) / (1 - s);
  }
}

Table error_band_table(const ErrorBand& band, bool cluster) {
  Table table{"error_band", "The error each predicted speedup's band carries", {}, {}, {}, true};
  table.columns = {text_column("term", "term"),
                   {"worst_abs_error_percent", "worst |error| %", 1},
                   {"judged", "over"},
                   text_column("judged_on", "judged on")};
  if (band.allreduce)
    table.add_row({std::string("all-reduce (the cluster model's)"), 100 * *band.allreduce,
                   std::int64_t(band.allreduce_judged), band.allreduce_judged_on});
  if (band.speedup)
    table.add_row({std::string("speedup (the step model's)"), 100 * *band.speedup, std::int64_t(band.speedup_judged),
                   band.speedup_judged_on});
  table.notes.push_back(
      "speedup [low, high]: low with the model's all-reduce / (1 - a) and the speedup / (1 + s), high with / (1 + a) "
      "and / (1 - s), a and s the worst |errors| above (a measured time within |error| <= e of a prediction p lies in "
      "[p / (1 + e), p / (1 - e)]); an all-reduce a sweep measured on the layout carries no a (docs/cluster.md, \"The "
      "error band\")");
  if (cluster && !band.allreduce)
    table.notes.push_back(
        "not carried: the all-reduce model's error; give --published with its tables, one of them held out of the fit");
  if (!band.speedup)
    table.notes.push_back(
        "not carried: the step model's error; give --check RESULTS.h5, measured with its 1-GPU baselines");
  return table;
}

}  // namespace mgpu::analysis
