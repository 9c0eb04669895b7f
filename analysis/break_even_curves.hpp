// Purpose: the report's break-even tables (docs/statistics.md "Break-even"): one row per speedup-versus-batch curve
// of the answer (stats/answer.hpp) with its break-even, interval and bands of no clear difference, in every output
// format; and, for CSV and JSON, one row per crossing of 1 and one per band.
#pragma once

#include <vector>

#include "stats/answer.hpp"
#include "table.hpp"

namespace mgpu::analysis {

// One row per curve: the break-even and its interval (its only crossing's figures where it crosses once), every
// crossing in words, the bands, the smallest batch from which it is faster, the statement.
Table break_even_table(const std::vector<stats::BreakEvenAnswer>& curves);
// One row per crossing of 1: direction, batch, its 95% interval with its open ends, the measured neighbours.
Table crossings_table(const std::vector<stats::BreakEvenAnswer>& curves);
// One row per band of no clear difference: its first and last batch and the range of its speedups.
Table bands_table(const std::vector<stats::BreakEvenAnswer>& curves);

}  // namespace mgpu::analysis
