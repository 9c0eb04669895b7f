// Purpose: answer_to_json (answer_json.hpp).
#include "answer_json.hpp"

#include "stats/speedup_verdict.hpp"

namespace mgpu::analysis {

nlohmann::json answer_to_json(const stats::Answer& answer, const std::string& files) {
  nlohmann::json pairs = nlohmann::json::array(), curves = nlohmann::json::array();
  for (const stats::PairAnswer& a : answer.pairs)
    pairs.push_back(
        {{"model", a.model},
         {"global_batch", a.global_batch},
         {"gpus", a.gpus},
         {"curve", a.curve},
         {"trials", a.pair.trials()},
         // The interval rule's verdict in words ("slower", "too few runs to tell").
         {"verdict", stats::speedup_verdict_words(stats::speedup_verdict(a.pair.speedup), a.missing_interval)},
         {"lines", stats::pair_lines(a)}});
  for (const stats::BreakEvenAnswer& c : answer.break_evens)
    curves.push_back({{"model", c.model}, {"gpus", c.gpus}, {"curve", c.curve}, {"line", stats::break_even_line(c)}});
  return {{"lines", stats::answer_lines(answer, files)}, {"pairs", pairs}, {"break_evens", curves}};
}

}  // namespace mgpu::analysis
