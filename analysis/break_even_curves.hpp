// Purpose: the report's break-even table (issue: "where do N GPUs start to pay?"): one row per speedup-versus-batch
// curve of the answer (stats/answer.hpp), in every output format.
#pragma once

#include <vector>

#include "stats/answer.hpp"
#include "table.hpp"

namespace mgpu::analysis {

// One row per curve: the break-even batch and its sentence (describe_break_even), the two measured neighbours with
// their intervals, and the smallest batch whose speedup is significantly above 1.
Table break_even_table(const std::vector<stats::BreakEvenAnswer>& curves);

}  // namespace mgpu::analysis
