// Purpose: the verdict's words: the plain sentence on a speedup and what more trials would do (answer.hpp puts them on
// every pair), and the verdict mgpu_bench prints last: the answer (answer.hpp) of its results file.
#pragma once

#include <string>
#include <vector>

#include "results/results_reader.hpp"
#include "stats/speedup_interval.hpp"

namespace mgpu::stats {

// One plain sentence on a speedup of `gpus` GPUs over 1, by where its interval lies (δ: kMinimumEffect):
//   wholly below 1 - δ: "2 GPUs are 0.42x as fast as 1 [0.42, 0.43]: adding a GPU slows this step down"
//   wholly above 1 + δ: "2 GPUs are 1.76x as fast as 1 [1.74, 1.78]: adding a GPU speeds this step up"
//   containing 1:       "... [0.98, 1.03]: no significant difference from 1 GPU (95% interval contains 1)"
//   otherwise:          "... [0.97, 0.99]: no clear difference from 1 GPU (the 95% interval excludes 1, not the δ ...)"
//   no interval:        "2 GPUs are 0.45x as fast as 1 (no interval: fewer than 5 kept runs): too few runs to tell"
// `fewest_kept_runs` is the smaller kept-run count of the two sides (says why an interval is missing).
std::string speedup_sentence(int gpus, const RatioInterval& speedup, int fewest_kept_runs);

// For a speedup over the means of `trials` trials whose sentence is not faster or slower: what more trials would do,
// if the trials vary as they did (the interval's half-width scaling with t(0.975, T - 1) / sqrt(T)):
//   "; about 5 trials in all would tell faster or slower by more than δ", "; more than 1000 trials ...", or, when
//   the speedup itself lies within δ of 1, "; more trials would narrow the interval around a speedup within δ of 1"
//   (δ as a percentage: percent_text(kMinimumEffect)).
// "" when the sentence already says faster or slower, or there is no interval.
std::string more_trials_note(const RatioInterval& speedup, int trials);

// The verdict of a results file as console lines (without a leading '#'), for a job of `job_ranks` ranks: with one
// rank a single line saying that a verdict needs at least 2; otherwise answer_lines of the file's answer.
std::vector<std::string> verdict_lines(const ResultsFile& file, int job_ranks);

}  // namespace mgpu::stats
