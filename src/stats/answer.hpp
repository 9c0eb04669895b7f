// Purpose: the answer, computed once (docs/statistics.md "The answer"): from a results file's configurations, every
// scaling pair (scaling.hpp) with its speedup, interval, efficiency, figures and plain sentence, and per model, GPU
// count and settings measured at two or more batches the break-even (break_even.hpp). mgpu_bench's verdict, every
// format of mgpu_analyze report, its page, plots and break-even table, and predict --check all read this; none judges a
// speedup of its own.
#pragma once

#include <string>
#include <vector>

#include "stats/break_even.hpp"
#include "stats/configuration_stats.hpp"
#include "stats/scaling.hpp"

namespace mgpu::stats {

struct PairAnswer {
  ScalingPair pair;
  std::string model;  // the preset's name, or a custom MLP's widths ("50-256-3")
  long long global_batch = 0;
  int gpus = 0;
  std::string curve;             // its speedup-versus-batch curve: "large on 2 GPUs", plus any non-default settings
  std::string figures;           // "large, global batch 32, 2 GPUs, 5 trials: speedup 0.426 [0.422, 0.430] over ..."
  std::string sentence;          // "2 GPUs are 0.43x as fast as 1 [0.42, 0.43]: adding a GPU slows this step down"
  std::string conclusion;        // the sentence after its figures: "adding a GPU slows this step down"
  std::string missing_interval;  // why the speedup has no interval ("too few runs", "too noisy"), "" when it has one
};

struct BreakEvenAnswer {
  std::string curve;  // as PairAnswer::curve
  std::string model;
  int gpus = 0;
  std::vector<SpeedupPoint> points;  // one per pair of the curve, by global batch
  BreakEven break_even;              // its crossings of 1 with their intervals, and its bands of no clear difference
  std::string sentence;              // describe_break_even
};

struct Answer {
  ScalingTable scaling;  // the pairs' sources, and what could not be paired
  std::vector<PairAnswer> pairs;
  std::vector<BreakEvenAnswer> break_evens;  // curves of two or more batches, in the order of their first pair
  bool any_trials() const;
};

// The configurations must outlive the answer (its pairs point into them).
Answer compute_answer(const std::vector<ConfigurationStats>& configurations);

// The answer as lines without a leading '#': a heading, per pair its figures and (indented) its sentence, per curve
// its break-even; the pairs that could not be made are said too. mgpu_bench prints these last.
std::vector<std::string> answer_lines(const Answer& answer, const std::string& file_path);
// Those lines of one pair (its figures, then its sentence) and of one curve.
std::vector<std::string> pair_lines(const PairAnswer& answer);
std::string break_even_line(const BreakEvenAnswer& curve);

}  // namespace mgpu::stats
