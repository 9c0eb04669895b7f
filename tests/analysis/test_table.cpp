// Purpose: the table renderings (table.hpp) read back: JSON through nlohmann-json, CSV and Markdown through the
// independent parsers of table_parsers.hpp, and the terminal table's alignment; numbers keep full precision in CSV and
// JSON, text with commas, quotes and pipes survives, empty values stay empty.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "platform/error.hpp"
#include "table.hpp"
#include "table_parsers.hpp"

using namespace mgpu;
using namespace mgpu::analysis;
using namespace mgpu::analysis_test;

namespace {

Table sample_table() {
  Table table;
  table.key = "sample";
  table.title = "A sample";
  table.columns = {{"name", "name", 0, false, false, "", "", true},
                   {"mean", "mean", 1, true},
                   {"ci95", "", 1, false, true, "± "},
                   {"count", "count"},
                   {"p", "p", 0, false, false, "", "", false, Shown::data_only},
                   {"p_text", "p", 0, false, false, "", "", false, Shown::screen_only}};
  table.add_row({std::string("plain"), 1234567.891, 0.1 + 0.2, std::int64_t{42}, 1e-300, std::string("1e-300")});
  table.add_row(
      {std::string("with, \"quotes\" | pipe"), -0.5, std::monostate{}, std::monostate{}, 0.5, std::string("0.500")});
  table.notes = {"a note"};
  return table;
}

TEST(Table, JsonReadsBackWithTypesAndFullPrecision) {
  const nlohmann::json json = nlohmann::json::parse(render_tables({sample_table()}, Format::json));
  const nlohmann::json& t = json.at("sample");
  EXPECT_EQ(t.at("title"), "A sample");
  EXPECT_EQ(t.at("columns"), nlohmann::json({"name", "mean", "ci95", "count", "p"}));  // no screen-only twin
  const nlohmann::json& rows = t.at("rows");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("mean").get<double>(), 1234567.891);
  EXPECT_EQ(rows[0].at("ci95").get<double>(), 0.1 + 0.2);
  EXPECT_EQ(rows[0].at("count").get<std::int64_t>(), 42);
  EXPECT_EQ(rows[0].at("p").get<double>(), 1e-300);
  EXPECT_EQ(rows[1].at("name"), "with, \"quotes\" | pipe");
  EXPECT_TRUE(rows[1].at("ci95").is_null());
  EXPECT_EQ(t.at("notes"), nlohmann::json({"a note"}));
}

TEST(Table, CsvReadsBackExactly) {
  const Rows rows = parse_csv(render_csv(sample_table()));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "mean", "ci95", "count", "p"}));
  EXPECT_EQ(rows[1][0], "plain");
  EXPECT_EQ(std::stod(rows[1][1]), 1234567.891);
  EXPECT_EQ(std::stod(rows[1][2]), 0.1 + 0.2);  // shortest round-trip text, not 0.3
  EXPECT_EQ(rows[1][3], "42");
  EXPECT_EQ(std::stod(rows[1][4]), 1e-300);
  EXPECT_EQ(rows[2][0], "with, \"quotes\" | pipe");
  EXPECT_EQ(rows[2][2], "");
  EXPECT_EQ(rows[2][3], "");
}

TEST(Table, MarkdownReadsBackAsShown) {
  const Rows rows = parse_markdown_tables(render_markdown(sample_table()));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"name", "mean", "count", "p"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"plain", "1,234,567.9 ± 0.3", "42", "1e-300"}));
  // An empty glued value disappears from its cell; an empty value of its own shows as a dash.
  EXPECT_EQ(rows[2], (std::vector<std::string>{"with, \"quotes\" | pipe", "-0.5", "—", "0.500"}));
}

TEST(Table, TerminalColumnsAlign) {
  const std::string text = render_terminal(sample_table());
  std::istringstream lines(text);
  std::string title, header, rule, first, second;
  std::getline(lines, title);
  std::getline(lines, header);
  std::getline(lines, rule);
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_EQ(title, "A sample");
  // Text left-aligned, numbers right-aligned, two spaces between columns; "±" and "—" count as one column.
  EXPECT_EQ(header, "  name                                mean  count       p");
  EXPECT_EQ(first, "  plain                  1,234,567.9 ± 0.3     42  1e-300");
  EXPECT_EQ(second, "  with, \"quotes\" | pipe               -0.5      —   0.500");
}

TEST(Table, RoundingNoiseShowsNoMinusSign) {
  const Column column{"x", "x", 4};
  EXPECT_EQ(display_value(column, Value{-1e-9}), "0.0000");
  EXPECT_EQ(display_value(column, Value{-0.00005}), "-0.0001");
  EXPECT_EQ(display_value(Column{"x", "x", 0, true}, Value{-1234.4}), "-1,234");
  // The sign is not a digit: six digits after it take one separator, not one before them too.
  EXPECT_EQ(display_value(Column{"x", "x", 0, true}, Value{-123456.0}), "-123,456");
}

TEST(Table, RowOfTheWrongWidthAndUnknownFormatAreRefused) {
  Table table = sample_table();
  EXPECT_THROW(table.add_row({1.0}), Error);
  EXPECT_THROW(parse_format("xml"), UsageError);
  EXPECT_EQ(parse_format("markdown"), Format::markdown);
}

}  // namespace
