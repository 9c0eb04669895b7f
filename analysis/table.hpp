// Purpose: a table of typed values and its four renderings: aligned terminal text, Markdown, CSV and JSON (through
// nlohmann-json). Tables carry numbers, not pre-formatted text, so CSV and JSON keep full precision while the terminal
// and Markdown show rounded values; a column may be shown glued to the one before it ("1234 ± 5", "1.02 [0.99, 1.05]").
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "config/setting_values.hpp"

namespace mgpu::analysis {

// Empty (no value: "—" on screen, empty in CSV, null in JSON), a number, an integer or text.
using Value = std::variant<std::monostate, double, std::int64_t, std::string>;

// Where a column appears: a number with a text twin (Welch's p in fixed or scientific notation) is data_only, its twin
// screen_only.
enum class Shown { everywhere, data_only, screen_only };

struct Column {
  std::string key;         // CSV header and JSON member name: lower_snake_case
  std::string header;      // terminal and Markdown header
  int decimals = 0;        // for doubles on the terminal and in Markdown
  bool thousands = false;  // group thousands with ","
  bool glued = false;      // shown in the previous column's cell, after a space
  std::string prefix;      // around the shown value, e.g. "± " or "[" and "]"
  std::string suffix;
  bool left_aligned = false;  // text columns
  Shown shown = Shown::everywhere;
};

// A left-aligned text column (decimals, thousands and affixes are for numbers).
Column text_column(std::string key, std::string header);
// A column only CSV and JSON carry, at full precision: no screen formatting applies to it.
Column data_column(std::string key, std::string header);

struct Table {
  std::string key;    // file stem and JSON member: "configurations", "scaling", ...
  std::string title;  // shown above it
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;  // each row has columns.size() values
  std::vector<std::string> notes;        // lines shown after it (method, exclusions, ...)
  bool on_screen = true;                 // false: only in CSV and JSON (per-run data, too long for a terminal)

  Table& add_row(std::vector<Value> row);
};

// The report formats, in the order --help lists them; a new one has its name here and its renderer and file extension
// in table.cpp.
enum class Format { terminal, markdown, csv, json };
inline constexpr NamedValue<Format> kFormatNames[] = {
    {Format::terminal, "table", "aligned text"},
    {Format::markdown, "markdown", "Markdown tables"},
    {Format::csv, "csv", "RFC 4180, a title line before each table"},
    {Format::json, "json", "the tables with the settings (and report's answer)"}};
constexpr const auto& named_values(Format) { return kFormatNames; }
// The format named `name`; throws UsageError naming --format and the names otherwise.
Format parse_format(const std::string& name);
const char* format_extension(Format format);  // "txt", "md", "csv", "json"

// One value as the terminal and Markdown show it.
std::string display_value(const Column& column, const Value& value);

// A table as a screen shows it (the terminal, Markdown, the report page): glued columns merged into one cell, data-only
// columns left out, values rounded.
struct ShownTable {
  std::vector<std::string> headers;
  std::vector<bool> left_aligned;
  std::vector<std::vector<std::string>> rows;
};
ShownTable shown_table(const Table& table);

std::string render_terminal(const Table& table);
std::string render_markdown(const Table& table);
// RFC 4180: header row of column keys, then one row per table row; numbers in full precision.
std::string render_csv(const Table& table);
// {"title": ..., "columns": [keys], "rows": [{key: value}], "notes": [...]}.
nlohmann::json table_to_json(const Table& table);
// {table.key: table_to_json(table)} for every table.
nlohmann::json tables_to_json(const std::vector<Table>& tables);

// Several tables in one format (CSV: each table preceded by a "# title" line, tables separated by a blank line); the
// terminal and Markdown leave out tables that are not on_screen.
std::string render_tables(const std::vector<Table>& tables, Format format);

}  // namespace mgpu::analysis
