// Purpose: break_even_table (break_even_curves.hpp).
#include "break_even_curves.hpp"

#include <optional>

namespace mgpu::analysis {

namespace {

const char* kind_name(stats::BreakEven::Kind kind) {
  switch (kind) {
    case stats::BreakEven::Kind::crossing:
      return "crossing";
    case stats::BreakEven::Kind::always:
      return "every measured batch";
    case stats::BreakEven::Kind::never:
      return "never in the measured range";
    case stats::BreakEven::Kind::no_data:
      return "no data";
  }
  return "";
}

// A measured neighbour as four data columns: batch, speedup and its interval.
void add_point_columns(std::vector<Column>& columns, const std::string& prefix) {
  for (const char* part : {"_batch", "_speedup", "_speedup_low", "_speedup_high"})
    columns.push_back(data_column(prefix + part, prefix + part));
}
void add_point_values(std::vector<Value>& row, const std::optional<stats::SpeedupPoint>& point) {
  if (!point) {
    row.insert(row.end(), {std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}});
    return;
  }
  row.push_back(static_cast<std::int64_t>(point->global_batch));
  row.push_back(point->speedup);
  row.push_back(point->has_interval ? Value(point->low) : Value(std::monostate{}));
  row.push_back(point->has_interval ? Value(point->high) : Value(std::monostate{}));
}

}  // namespace

Table break_even_table(const std::vector<stats::BreakEvenAnswer>& curves) {
  Table table;
  table.key = "break_even";
  table.title = "Break-even batch: from which global batch N GPUs are faster than 1 (speedup >= 1)";
  table.columns = {text_column("model", "model"),
                   {"gpus", "GPUs"},
                   text_column("series", "curve"),
                   {"batches", "batches"},
                   data_column("kind", "kind"),
                   {"break_even_batch", "break-even batch", 0, true},
                   {"smallest_significant_batch", "significant from"},
                   text_column("statement", "statement")};
  add_point_columns(table.columns, "below");
  add_point_columns(table.columns, "above");
  for (const stats::BreakEvenAnswer& curve : curves) {
    const stats::BreakEven& b = curve.break_even;
    std::vector<Value> row = {curve.model, static_cast<std::int64_t>(curve.gpus), curve.curve,
                              static_cast<std::int64_t>(curve.points.size()), std::string(kind_name(b.kind))};
    row.push_back(b.kind == stats::BreakEven::Kind::crossing || b.kind == stats::BreakEven::Kind::always
                      ? Value(b.batch)
                      : Value(std::monostate{}));
    row.push_back(b.smallest_significant ? Value(static_cast<std::int64_t>(b.smallest_significant->global_batch))
                                         : Value(std::monostate{}));
    row.push_back(stats::describe_break_even(b));
    add_point_values(row, b.below);
    add_point_values(row, b.above);
    table.add_row(std::move(row));
  }
  table.notes.push_back(
      "break-even: the last crossing of speedup 1 from below, linear in log(batch) between the two measured "
      "neighbours named (speedup [95%], as in the scaling table: over the trial means where measured in trials); N "
      "GPUs pay at every larger measured batch. 'never': the largest "
      "measured batch is below 1. significant from: the smallest measured batch whose interval lies wholly above 1, "
      "with every larger batch paying (— where none).");
  return table;
}

}  // namespace mgpu::analysis
