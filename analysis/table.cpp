// Purpose: rendering typed tables as terminal text, Markdown, CSV and JSON.
#include "table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "platform/error.hpp"
#include "results/results_reader.hpp"  // shortest_double_text

namespace mgpu::analysis {
namespace {

std::string group_thousands(const std::string& digits) {
  // digits: optional sign, integer part, optional fraction
  const std::size_t start = (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) ? 1 : 0;
  std::size_t end = digits.find('.');
  if (end == std::string::npos) end = digits.size();
  std::string out = digits;
  for (std::size_t i = end; i > start + 3; i -= 3) out.insert(i - 3, ",");
  return out;
}

std::string format_double(double value, int decimals, bool thousands) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  // A tiny negative value (rounding noise of a difference) shows as 0.0000, not -0.0000.
  if (text[0] == '-' && std::strspn(text + 1, "0.") == std::strlen(text + 1))
    std::memmove(text, text + 1, sizeof text - 1);
  return thousands ? group_thousands(text) : text;
}

// Display width in terminal columns: count UTF-8 lead bytes, so "±" and "—" count once.
std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (const unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++width;
  return width;
}

std::string pad(const std::string& text, std::size_t width, bool left) {
  const std::size_t have = display_width(text);
  if (have >= width) return text;
  const std::string fill(width - have, ' ');
  return left ? text + fill : fill + text;
}

// The shown cells of a row: glued columns are appended to the cell before them.
struct ShownColumn {
  std::string header;
  bool left = false;
  std::vector<std::size_t> members;
};

std::vector<ShownColumn> shown_columns(const Table& table) {
  std::vector<ShownColumn> shown;
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const Column& column = table.columns[c];
    if (column.shown == Shown::data_only) continue;
    if (column.glued && !shown.empty()) {
      shown.back().members.push_back(c);
      if (!column.header.empty()) shown.back().header += " " + column.header;
    } else {
      shown.push_back({column.header, column.left_aligned, {c}});
    }
  }
  return shown;
}

std::vector<std::vector<std::string>> shown_cells(const Table& table, const std::vector<ShownColumn>& shown) {
  std::vector<std::vector<std::string>> cells;
  for (const auto& row : table.rows) {
    std::vector<std::string> line;
    for (const ShownColumn& s : shown) {
      std::string cell;
      for (const std::size_t c : s.members) {
        if (std::holds_alternative<std::monostate>(row[c]) && c != s.members.front()) continue;  // nothing to glue
        const std::string text = display_value(table.columns[c], row[c]);
        cell += (cell.empty() ? "" : " ") + text;
      }
      line.push_back(cell);
    }
    cells.push_back(std::move(line));
  }
  return cells;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv_value(const Value& value) {
  if (const auto* d = std::get_if<double>(&value)) return shortest_double_text(*d);  // full precision for machines
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&value)) return csv_field(*s);
  return "";
}

std::string markdown_escape(const std::string& text) {
  std::string out;
  for (const char c : text) out += (c == '|') ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

Table& Table::add_row(std::vector<Value> row) {
  MGPU_REQUIRE(row.size() == columns.size(), "table '" + key + "': a row of " + std::to_string(row.size()) +
                                                 " values for " + std::to_string(columns.size()) + " columns");
  rows.push_back(std::move(row));
  return *this;
}

Column text_column(std::string key, std::string header) {
  Column column{std::move(key), std::move(header)};
  column.left_aligned = true;
  return column;
}

Column data_column(std::string key, std::string header) {
  Column column{std::move(key), std::move(header)};
  column.shown = Shown::data_only;
  return column;
}

Format parse_format(const std::string& name) {
  if (const std::optional<Format> format = find_setting_value<Format>(name, true)) return *format;
  throw UsageError("--format " + name + ": expected " + choice_list(command_line_names<Format>()));
}

const char* format_extension(Format format) {
  switch (format) {
    case Format::terminal:
      return "txt";
    case Format::markdown:
      return "md";
    case Format::csv:
      return "csv";
    case Format::json:
      return "json";
  }
  return "txt";
}

std::string display_value(const Column& column, const Value& value) {
  std::string text;
  if (std::holds_alternative<std::monostate>(value)) return "—";
  if (const auto* d = std::get_if<double>(&value)) text = format_double(*d, column.decimals, column.thousands);
  if (const auto* i = std::get_if<std::int64_t>(&value))
    text = column.thousands ? group_thousands(std::to_string(*i)) : std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&value)) text = *s;
  return column.prefix + text + column.suffix;
}

ShownTable shown_table(const Table& table) {
  const std::vector<ShownColumn> shown = shown_columns(table);
  ShownTable out;
  for (const ShownColumn& s : shown) {
    out.headers.push_back(s.header);
    out.left_aligned.push_back(s.left);
  }
  out.rows = shown_cells(table, shown);
  return out;
}

std::string render_terminal(const Table& table) {
  const std::vector<ShownColumn> shown = shown_columns(table);
  const auto cells = shown_cells(table, shown);
  std::vector<std::size_t> widths;
  for (const ShownColumn& s : shown) widths.push_back(display_width(s.header));
  for (const auto& line : cells)
    for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], display_width(line[c]));
  std::ostringstream out;
  out << table.title << "\n";
  const auto emit = [&](const std::vector<std::string>& line) {
    std::string text;
    for (std::size_t c = 0; c < line.size(); ++c) text += (c > 0 ? "  " : "") + pad(line[c], widths[c], shown[c].left);
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << "  " << text << "\n";
  };
  std::vector<std::string> headers;
  for (const ShownColumn& s : shown) headers.push_back(s.header);
  emit(headers);
  std::vector<std::string> rules;
  for (const std::size_t w : widths) rules.push_back(std::string(w, '-'));
  emit(rules);
  for (const auto& line : cells) emit(line);
  for (const std::string& note : table.notes) out << "  " << note << "\n";
  return out.str();
}

std::string render_markdown(const Table& table) {
  const std::vector<ShownColumn> shown = shown_columns(table);
  const auto cells = shown_cells(table, shown);
  std::ostringstream out;
  out << "### " << table.title << "\n\n|";
  for (const ShownColumn& s : shown) out << " " << markdown_escape(s.header) << " |";
  out << "\n|";
  for (const ShownColumn& s : shown) out << (s.left ? "---|" : "---:|");
  out << "\n";
  for (const auto& line : cells) {
    out << "|";
    for (const std::string& cell : line) out << " " << markdown_escape(cell) << " |";
    out << "\n";
  }
  if (!table.notes.empty()) out << "\n";
  for (const std::string& note : table.notes) out << "- " << note << "\n";
  return out.str();
}

std::string render_csv(const Table& table) {
  std::ostringstream out;
  const auto emit = [&](const auto& field_of) {
    bool first = true;
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
      if (table.columns[c].shown == Shown::screen_only) continue;
      out << (first ? "" : ",") << field_of(c);
      first = false;
    }
    out << "\r\n";
  };
  emit([&](std::size_t c) { return csv_field(table.columns[c].key); });
  for (const auto& row : table.rows) emit([&](std::size_t c) { return csv_value(row[c]); });
  return out.str();
}

nlohmann::json table_to_json(const Table& table) {
  nlohmann::json json;
  json["title"] = table.title;
  json["columns"] = nlohmann::json::array();
  for (const Column& column : table.columns)
    if (column.shown != Shown::screen_only) json["columns"].push_back(column.key);
  json["rows"] = nlohmann::json::array();
  for (const auto& row : table.rows) {
    nlohmann::json object = nlohmann::json::object();
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (table.columns[c].shown == Shown::screen_only) continue;
      const std::string& key = table.columns[c].key;
      std::visit(
          [&](const auto& v) {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<V, std::monostate>)
              object[key] = nullptr;
            else if constexpr (std::is_same_v<V, double>)
              object[key] = std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
            else
              object[key] = v;
          },
          row[c]);
    }
    json["rows"].push_back(std::move(object));
  }
  json["notes"] = table.notes;
  return json;
}

nlohmann::json tables_to_json(const std::vector<Table>& tables) {
  nlohmann::json json = nlohmann::json::object();
  for (const Table& table : tables) json[table.key] = table_to_json(table);
  return json;
}

std::string render_tables(const std::vector<Table>& tables, Format format) {
  std::string out;
  if (format == Format::json) return tables_to_json(tables).dump(2) + "\n";
  bool first = true;
  for (std::size_t t = 0; t < tables.size(); ++t) {
    if (!tables[t].on_screen && (format == Format::terminal || format == Format::markdown)) continue;
    if (!first) out += "\n";
    first = false;
    switch (format) {
      case Format::terminal:
        out += render_terminal(tables[t]);
        break;
      case Format::markdown:
        out += render_markdown(tables[t]);
        break;
      case Format::csv:
        out += "# " + tables[t].title + "\r\n" + render_csv(tables[t]);
        break;
      case Format::json:
        break;
    }
  }
  return out;
}

}  // namespace mgpu::analysis
