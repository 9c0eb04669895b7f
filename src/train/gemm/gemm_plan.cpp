// Purpose: reading a GEMM plan back from a results file's gemm_choices (gemm_plan.hpp).
#include "train/gemm/gemm_plan.hpp"

#include <regex>
#include <sstream>

#include "platform/error.hpp"

namespace mgpu {

std::string gemm_shape_label(bool a_transposed, bool b_transposed, int m, int n, int k, int lda, int ldb, int ldc,
                             int alignment_bytes) {
  std::string label = std::string(1, a_transposed ? 'T' : 'N') + (b_transposed ? 'T' : 'N') +
                      " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
  // Column-major, as stored: A is k x m when transposed, else m x k; B n x k or k x n; C m x n.
  if (lda != (a_transposed ? k : m)) label += " lda=" + std::to_string(lda);
  if (ldb != (b_transposed ? n : k)) label += " ldb=" + std::to_string(ldb);
  if (ldc != m) label += " ldc=" + std::to_string(ldc);
  if (alignment_bytes < 16) label += " aligned " + std::to_string(alignment_bytes);
  return label;
}

GemmPlan parse_gemm_choices(const std::string& gemm_choices, const std::string& source) {
  // The option is everything up to the last " (T us alone": option names hold parentheses of their own.
  static const std::regex line_form(R"(^gemm (.+?): (.+) \([0-9.]+ us alone.*$)");
  GemmPlan plan;
  plan.source = source;
  std::istringstream lines(gemm_choices);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    std::smatch parts;
    if (!std::regex_match(line, parts, line_form))
      throw UsageError("--gemm-plan " + source + ": '" + line + "' is not a GEMM choice ('gemm SHAPE: OPTION (...)')");
    const auto [entry, added] = plan.option_of_shape.emplace(parts[1].str(), parts[2].str());
    if (!added && entry->second != parts[2].str())
      throw UsageError("--gemm-plan " + source + ": shape " + entry->first + " has two choices, '" + entry->second +
                       "' and '" + parts[2].str() + "'");
  }
  return plan;
}

std::string gemm_choices_text(const GemmPlan& plan) {
  std::string text;
  for (const auto& [shape, option] : plan.option_of_shape) text += "gemm " + shape + ": " + option + " (0 us alone)\n";
  return text;
}

}  // namespace mgpu
