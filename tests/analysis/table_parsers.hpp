// Purpose: small, independent parsers for mgpu_analyze's CSV (RFC 4180) and Markdown tables, used by the tests to read
// every output format back.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace mgpu::analysis_test {

using Rows = std::vector<std::vector<std::string>>;

// RFC 4180 records: quoted fields may hold commas, quotes ("") and line breaks; records end with CRLF or LF.
inline Rows parse_csv(const std::string& text) {
  Rows rows;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
      any = true;
    } else if (c == '\r') {
      continue;
    } else if (c == '\n') {
      record.push_back(field);
      rows.push_back(record);
      record.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any) {
    record.push_back(field);
    rows.push_back(record);
  }
  return rows;
}

// The rows of every Markdown table line ("| a | b |"), cells trimmed, "\|" unescaped; the "---" rule is skipped.
inline Rows parse_markdown_tables(const std::string& text) {
  Rows rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '|') continue;
    std::vector<std::string> cells;
    std::string cell;
    for (std::size_t i = 1; i < line.size(); ++i) {
      if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
        cell += '|';
        ++i;
      } else if (line[i] == '|') {
        const std::size_t first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
        cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
        cell.clear();
      } else {
        cell += line[i];
      }
    }
    if (!cells.empty() && cells[0].rfind("---", 0) == 0) continue;
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace mgpu::analysis_test
