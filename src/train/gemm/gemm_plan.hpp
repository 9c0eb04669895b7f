// Purpose: a GEMM plan, what runs each GEMM shape of a configuration's step, read back from the text a results file
// records as gemm_choices, so that a later job can run the same plan instead of tuning its own (--gemm-plan).
#pragma once

#include <string>

#include "config/step_settings.hpp"

namespace mgpu {

// A GEMM as plans and reports name it: "TN m=1024 n=32 k=4800" (op_a, op_b as cuBLAS's operations), followed by what
// else sets it apart from another GEMM of the same sizes, so that no two GEMMs a step tunes apart share a name: a
// leading dimension other than the packed one (" lda=4096"), operands aligned to fewer than 16 bytes (" aligned 4").
std::string gemm_shape_label(bool a_transposed, bool b_transposed, int m, int n, int k, int lda, int ldb, int ldc,
                             int alignment_bytes);

// The plan in a gemm_choices text: one line per shape, "gemm SHAPE: OPTION (T us alone...)". Throws UsageError naming
// `source` for a line of another form, or a shape named twice with two options.
GemmPlan parse_gemm_choices(const std::string& gemm_choices, const std::string& source);
// The plan as a gemm_choices text that parse_gemm_choices reads back (times 0: it carries no timings).
std::string gemm_choices_text(const GemmPlan& plan);

}  // namespace mgpu
