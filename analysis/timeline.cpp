// Purpose: terminal timeline of the mean step's phases.
#include "timeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mgpu::analysis {

std::string render_timeline(const std::vector<stats::ConfigurationStats>& configurations, int width) {
  double longest = 0;
  for (const stats::ConfigurationStats& s : configurations) longest = std::max(longest, s.mean_step_ms);
  if (longest <= 0) return "";
  const double ms_per_char = longest / width;
  char line[256];
  std::snprintf(line, sizeof line, "Timeline of the mean step (one character = %.4f ms; same scale for all)\n",
                ms_per_char);
  std::string out = line;
  const auto column = [&](double ms) { return static_cast<int>(std::lround(ms / ms_per_char)); };
  for (const stats::ConfigurationStats& s : configurations) {
    std::snprintf(line, sizeof line, "  %s  ['%s', %d GPU%s, batch %d]: step %.4f ms\n", s.label.c_str(),
                  s.file.c_str(), s.results->ranks(), s.results->ranks() > 1 ? "s" : "",
                  s.results->metadata.global_batch(), s.mean_step_ms);
    out += line;
    // --timing step or none, or a peer that times its step as one unit (a CUDA-graph replay): no phase to draw.
    if (std::isnan(s.phase(stats::BreakdownPhase::forward))) {
      out += "    phases not measured, only the step (" + s.results->metadata.implementation + ", timing " +
             setting_name(s.results->metadata.training().timing) + ")\n";
      continue;
    }
    // Where each bar starts, in ms from the step's start.
    double start = 0;
    double backward_end = 0;
    const auto bar = [&](stats::BreakdownPhase p, double from) {
      const double ms = std::max(0.0, s.phase(p));
      // A phase shorter than half a character still shows as a thin mark, so no phase silently vanishes; rounding
      // never pushes a bar past the frame.
      const int last = std::min(width, column(from + ms));
      const int first = std::min(column(from), ms > 0 ? width - 1 : width);
      const int length = std::max(0, last - first);
      std::string text = "    ";
      char name[24];
      std::snprintf(name, sizeof name, "%-13s|", stats::kBreakdownPhaseNames[static_cast<int>(p)]);
      text += name;
      text += std::string(static_cast<std::size_t>(first), ' ');
      int used = first;
      if (length > 0) {
        for (int i = 0; i < length; ++i) text += "█";
        used += length;
      } else if (ms > 0) {
        text += "▏";
        used += 1;
      }
      text += std::string(static_cast<std::size_t>(std::max(0, width - used)), ' ');
      // The value as measured: a negative "other" (phases that ran at the same time, e.g. Adam per bucket during
      // backward with deferred overlap) draws no bar but keeps its sign, so the numbers still add up to the step.
      std::snprintf(line, sizeof line, "| %8.4f ms %5.1f%%\n", s.phase(p), 100 * s.share(p));
      out += text + line;
    };
    for (const stats::BreakdownPhase p : stats::kStackedPhases) {
      if (p == stats::BreakdownPhase::exposed_comm) {
        bar(stats::BreakdownPhase::allreduce, backward_end);  // on the communication stream, launched after backward
      }
      bar(p, start);
      start += std::max(0.0, s.phase(p));
      if (p == stats::BreakdownPhase::backward) backward_end = start;
    }
    if (s.phase(stats::BreakdownPhase::other) < 0)
      out += "    other < 0: phases overlapped one another, so their sum exceeds the step\n";
  }
  return out;
}

}  // namespace mgpu::analysis
