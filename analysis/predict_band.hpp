// Purpose: a predicted speedup's error band (docs/cluster.md, "The error band"): the relative errors a prediction
// carries (the cluster all-reduce model's, judged on published tables of which one was held out of the fit; the step
// model's, judged by --check on a measured file), each configuration's speedup at the band's ends, and the table that
// says what the band carries and on what it was judged.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "predict.hpp"
#include "stats/published_allreduce.hpp"
#include "table.hpp"

namespace mgpu::analysis {

// The relative errors a prediction carries, each below 1 and with what judged it; absent where none is known.
struct ErrorBand {
  std::optional<double> allreduce;  // the cluster all-reduce model's: stats::carried_allreduce_error
  std::string allreduce_judged_on;  // "nccl-tests #309 (in-sample, 8 rows), nccl-tests #119 (held out, 9 rows)"
  int allreduce_judged = 0;         // the rows of those tables
  std::optional<double> speedup;    // the step model's: its worst |speedup error| over the --check file
  std::string speedup_judged_on;    // "--check grid.h5 (20 speedups)"
  int speedup_judged = 0;           // the speedups of that file
  bool any() const { return allreduce.has_value() || speedup.has_value(); }
};

// The band of a prediction from the --published tables (only on a cluster: they judge the cluster model) and the
// --check summary (null without one, or where it has no speedup).
ErrorBand error_band_of(bool cluster, const std::vector<stats::PublishedTable>& published,
                        const std::string& check_path, const CheckSummary* check);

// Each N-GPU configuration's speedup at the band's ends. A measured time within |error| <= e of a prediction p lies
// in [p / (1 + e), p / (1 - e)]: the low end takes the model's all-reduce (never a measured sweep's) / (1 - a) and
// divides that speedup by 1 + s, the high end the all-reduce / (1 + a) and the speedup / (1 - s); an error not known
// counts as 0. UsageError for an error of 1 or more (no upper end). Nothing changes without a band.
void add_error_band(std::vector<PredictedConfiguration>& grid, const stats::StepModel& model, const MlpSpec& mlp,
                    Precision precision, const ErrorBand& band);

// One row per error the band carries: its worst |error| % and what judged it; the notes say how the ends are taken
// and name what is missing (on a cluster, the all-reduce's; everywhere, the step model's).
Table error_band_table(const ErrorBand& band, bool cluster);

}  // namespace mgpu::analysis
