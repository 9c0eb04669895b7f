// Purpose: the answer in `report --format json` (docs/report.md): the lines mgpu_bench's verdict prints, grouped by
// pair and curve with what identifies each, so a script (bench/generate_docs.py) quotes the product's own words
// without parsing console text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "stats/answer.hpp"

namespace mgpu::analysis {

// {"lines": every line of answer_lines, "pairs": [{model, global_batch, gpus, curve, trials, verdict, lines}],
//  "break_evens": [{model, gpus, curve, line}]}; `files` names the files in the no-pair line.
nlohmann::json answer_to_json(const stats::Answer& answer, const std::string& files);

}  // namespace mgpu::analysis
