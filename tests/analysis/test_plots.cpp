// Purpose: tests of plots.hpp's own helpers; the plots themselves are checked through mgpu_analyze report's scripts
// and data in test_analyze_cli.cpp.
#include <gtest/gtest.h>

#include "plots.hpp"

namespace mgpu::analysis {
namespace {

// A label or a path in a gnuplot script is a double-quoted string: a quote or a backslash inside is escaped, every
// other character kept, so a configuration named 'a"b\c' cannot end the string early.
TEST(Plots, GnuplotStringEscapesQuotesAndBackslashes) {
  EXPECT_EQ(gnuplot_string(""), "\"\"");
  EXPECT_EQ(gnuplot_string("plain 1.5 ms, 2 GPUs"), "\"plain 1.5 ms, 2 GPUs\"");
  EXPECT_EQ(gnuplot_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(gnuplot_string("it's"), "\"it's\"");
}

}  // namespace
}  // namespace mgpu::analysis
