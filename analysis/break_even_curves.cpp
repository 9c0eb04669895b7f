// Purpose: break_even_table, crossings_table and bands_table (break_even_curves.hpp). Every word they show about a
// break-even comes from stats/break_even.hpp.
#include "break_even_curves.hpp"

namespace mgpu::analysis {

namespace {

Value integer(long long value) { return static_cast<std::int64_t>(value); }
Value yes_no(bool value) { return std::string(value ? "yes" : "no"); }

std::vector<Column> curve_columns() {
  return {text_column("model", "model"), {"gpus", "GPUs"}, text_column("curve", "curve")};
}
std::vector<Value> curve_values(const stats::BreakEvenAnswer& curve) {
  return {curve.model, integer(curve.gpus), curve.curve};
}

// A measured neighbour as four data columns: batch, speedup and its interval.
void add_point_columns(std::vector<Column>& columns, const std::string& prefix) {
  for (const char* part : {"_batch", "_speedup", "_speedup_low", "_speedup_high"})
    columns.push_back(data_column(prefix + part, prefix + part));
}
void add_point_values(std::vector<Value>& row, const stats::SpeedupPoint* point) {
  if (point == nullptr) {
    row.insert(row.end(), 4, std::monostate{});
    return;
  }
  row.push_back(integer(point->global_batch));
  row.push_back(point->speedup);
  row.push_back(point->has_interval ? Value(point->low) : Value(std::monostate{}));
  row.push_back(point->has_interval ? Value(point->high) : Value(std::monostate{}));
}

// A crossing's batch and interval as data columns: <prefix>batch, <prefix>low, ... (the open ends "yes" or "no").
void add_crossing_columns(std::vector<Column>& columns, const std::string& prefix) {
  for (const char* part : {"batch", "low", "high", "low_open", "high_open"})
    columns.push_back(data_column(prefix + part, prefix + part));
}
void add_crossing_values(std::vector<Value>& row, const stats::Crossing* c) {
  if (c == nullptr) {
    row.insert(row.end(), 5, std::monostate{});
    return;
  }
  row.push_back(c->batch);
  row.push_back(c->has_interval ? Value(c->low) : Value(std::monostate{}));
  row.push_back(c->has_interval ? Value(c->high) : Value(std::monostate{}));
  row.push_back(c->has_interval ? yes_no(c->low_open) : Value(std::monostate{}));
  row.push_back(c->has_interval ? yes_no(c->high_open) : Value(std::monostate{}));
}

// A table with a row per item of a curve (crossing, band), in CSV and JSON: the curve's columns first, the method
// under it.
Table per_curve_table(const char* key, const char* title) {
  Table table;
  table.key = key;
  table.title = title;
  table.on_screen = false;
  table.columns = curve_columns();
  table.notes.push_back(stats::break_even_method());
  return table;
}

}  // namespace

Table break_even_table(const std::vector<stats::BreakEvenAnswer>& curves) {
  Table table;
  table.key = "break_even";
  table.title = "Break-even: where N GPUs start (or stop) being faster than 1, with its 95% interval";
  table.columns = curve_columns();
  table.columns.push_back({"batches", "batches"});
  table.columns.push_back(data_column("smallest_batch", "smallest_batch"));
  table.columns.push_back(data_column("largest_batch", "largest_batch"));
  table.columns.push_back(data_column("kind", "kind"));
  table.columns.push_back({"crossings", "crossings"});
  table.columns.push_back(text_column("break_even", "break-even [95%]"));
  table.columns.push_back(text_column("no_clear_difference", "no clear difference"));
  table.columns.push_back({"faster_from_batch", "faster from"});
  // Where the curve crosses 1 once: that crossing's figures and neighbours (every crossing: crossings_table).
  add_crossing_columns(table.columns, "break_even_");
  add_point_columns(table.columns, "before");
  add_point_columns(table.columns, "after");
  table.columns.push_back(data_column("verdicts", "verdicts"));
  table.columns.push_back(text_column("statement", "statement"));
  for (const stats::BreakEvenAnswer& curve : curves) {
    const stats::BreakEven& b = curve.break_even;
    const stats::Crossing* only = b.crossings.size() == 1 ? &b.crossings.front() : nullptr;
    std::vector<Value> row = curve_values(curve);
    row.push_back(integer(static_cast<long long>(b.points.size())));
    row.push_back(b.points.empty() ? Value() : integer(b.points.front().global_batch));
    row.push_back(b.points.empty() ? Value() : integer(b.points.back().global_batch));
    row.push_back(stats::break_even_kind(b));
    row.push_back(integer(static_cast<long long>(b.crossings.size())));
    row.push_back(stats::break_even_summary(b));
    row.push_back(stats::bands_summary(b));
    row.push_back(b.faster_from ? integer(b.faster_from->global_batch) : Value());
    add_crossing_values(row, only);
    add_point_values(row, only ? &only->before : nullptr);
    add_point_values(row, only ? &only->after : nullptr);
    row.push_back(stats::verdicts_by_batch(b));
    row.push_back(curve.sentence);
    table.add_row(std::move(row));
  }
  table.notes.push_back(stats::break_even_method());
  return table;
}

Table crossings_table(const std::vector<stats::BreakEvenAnswer>& curves) {
  Table table = per_curve_table("break_even_crossings", "Every crossing of speedup 1, with its 95% interval");
  table.columns.push_back({"crossing", "crossing"});
  table.columns.push_back(text_column("direction", "direction"));
  add_crossing_columns(table.columns, "");
  table.columns.push_back(text_column("text", "batch [95%]"));
  add_point_columns(table.columns, "before");
  add_point_columns(table.columns, "after");
  for (const stats::BreakEvenAnswer& curve : curves)
    for (std::size_t k = 0; k < curve.break_even.crossings.size(); ++k) {
      const stats::Crossing& c = curve.break_even.crossings[k];
      std::vector<Value> row = curve_values(curve);
      row.push_back(integer(static_cast<long long>(k + 1)));
      row.push_back(std::string(c.rising ? "rising" : "falling"));
      add_crossing_values(row, &c);
      row.push_back(stats::crossing_text(c));
      add_point_values(row, &c.before);
      add_point_values(row, &c.after);
      table.add_row(std::move(row));
    }
  return table;
}

Table bands_table(const std::vector<stats::BreakEvenAnswer>& curves) {
  Table table = per_curve_table("no_clear_difference",
                                "Bands of no clear difference: consecutive measured batches neither faster nor slower");
  table.columns.push_back({"band", "band"});
  table.columns.push_back({"from_batch", "from"});
  table.columns.push_back({"to_batch", "to"});
  table.columns.push_back({"batches", "batches"});
  table.columns.push_back(data_column("lowest_speedup", "lowest_speedup"));
  table.columns.push_back(data_column("highest_speedup", "highest_speedup"));
  for (const stats::BreakEvenAnswer& curve : curves)
    for (std::size_t k = 0; k < curve.break_even.bands.size(); ++k) {
      const stats::NoDifferenceBand& band = curve.break_even.bands[k];
      std::vector<Value> row = curve_values(curve);
      row.push_back(integer(static_cast<long long>(k + 1)));
      row.push_back(integer(band.first.global_batch));
      row.push_back(integer(band.last.global_batch));
      row.push_back(integer(band.batches));
      row.push_back(band.lowest_speedup);
      row.push_back(band.highest_speedup);
      table.add_row(std::move(row));
    }
  return table;
}

}  // namespace mgpu::analysis
