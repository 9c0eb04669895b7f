// Purpose: gnuplot data, scripts and images for the report (plots.hpp).
#include "plots.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "platform/error.hpp"
#include "series.hpp"

namespace mgpu::analysis {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw UsageError("cannot write '" + path + "'");
}

std::string gnuplot_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

void run_gnuplot(const std::string& gnuplot, const std::string& script) {
  const std::string log = script.substr(0, script.rfind('.')) + ".gnuplot.log";
  const std::string command = "'" + gnuplot + "' '" + script + "' > '" + log + "' 2>&1";
  const int status = std::system(command.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("gnuplot failed on '" + script + "' (its messages: '" + log + "')");
  ::unlink(log.c_str());
}

namespace {

// Colours that stay apart for the colour-blind and in greyscale print (Tableau 10 order); series i takes colour i.
const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
std::string colour(std::size_t index) {
  return std::string("rgb '") + kPalette[index % (sizeof kPalette / sizeof kPalette[0])] + "'";
}

std::string number_text(double value, const char* format = "%.10g") {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// Display width of a UTF-8 label in characters (continuation bytes do not count).
std::size_t characters(const std::string& text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// Rows of "x y low high" per series, sorted by x; gnuplot's index selects a series (blocks separated by 2 blank
// lines). Series keep the order they were first added in, so colours follow the reading order.
struct Series {
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::tuple<double, double, double, double>>> points;
  void add(const std::string& name, double x, double y, double low, double high) {
    if (points.count(name) == 0) names.push_back(name);
    points[name].emplace_back(x, y, low, high);
  }
  std::string data() const {
    std::ostringstream out;
    for (std::size_t i = 0; i < names.size(); ++i) {
      std::vector<std::tuple<double, double, double, double>> rows = points.at(names[i]);
      std::sort(rows.begin(), rows.end());
      out << (i > 0 ? "\n\n" : "") << "# " << names[i] << "\n";
      for (const auto& [x, y, low, high] : rows)
        out << number_text(x) << " " << number_text(y) << " " << number_text(low) << " " << number_text(high) << "\n";
    }
    return out.str();
  }
};

// The script draws the PNG, then the same plot as SVG (replot), so both show exactly the same thing.
std::string script(const std::string& stem_path, int width, int height, const std::string& settings,
                   const std::string& plot) {
  const std::string size = std::to_string(width) + "," + std::to_string(height);
  return "set terminal pngcairo size " + size + " noenhanced font 'sans,11'\nset output " +
         gnuplot_string(stem_path + ".png") + "\n" + settings + "plot " + plot + "\nset terminal svg size " + size +
         " noenhanced font 'sans,11' background rgb 'white'\nset output " + gnuplot_string(stem_path + ".svg") +
         "\nreplot\nunset output\n";
}

// Light grid, the key below the plot with room above it for the x label.
#define MGPU_LINE_PLOT_FRAME                                                                                       \
  "set grid lt 1 lc rgb '#e4e4e4'\nset border lc rgb '#404040'\nset key below left Left reverse samplen 2 height " \
  "1.5\n"
const char kLinePlotSettings[] = MGPU_LINE_PLOT_FRAME
    "set logscale x 2\nset xlabel 'global batch'\nset offsets graph 0.04, graph 0.04, graph 0.06, graph 0.06\n";

// One series as a line with points and its 95% interval as error bars.
std::string series_clauses(const std::string& data_file, const Series& series,
                           const std::map<std::string, std::string>& title_suffix = {}) {
  std::string clauses;
  for (std::size_t i = 0; i < series.names.size(); ++i) {
    const std::string data = gnuplot_string(data_file) + " index " + std::to_string(i);
    const auto suffix = title_suffix.find(series.names[i]);
    const std::string title =
        gnuplot_string(series.names[i] + (suffix == title_suffix.end() ? std::string() : suffix->second));
    if (!clauses.empty()) clauses += ", \\\n     ";
    clauses += data + " using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 0.9 lc " + colour(i) + " title " + title;
  }
  return clauses;
}

// Tics at 1, 2 and 5 times powers of ten between low and high, labelled "200", "5k", "1.2M" style: gnuplot's own
// log tics are whole decades, too few when a plot spans less than one.
std::string log_tics(double low, double high) {
  std::string tics;
  if (!(low > 0) || !(high >= low)) return tics;
  for (double decade = std::pow(10.0, std::floor(std::log10(low))); decade <= high; decade *= 10)
    for (const double mantissa : {1.0, 2.0, 5.0}) {
      const double value = mantissa * decade;
      if (value < low / 1.25 || value > high * 1.25) continue;
      const char* unit = value >= 1e6 ? "M" : (value >= 1e3 ? "k" : "");
      const double shown = value >= 1e6 ? value / 1e6 : (value >= 1e3 ? value / 1e3 : value);
      tics += (tics.empty() ? "" : ", ") + gnuplot_string(number_text(shown, "%g") + unit) + " " + number_text(value);
    }
  return tics.empty() ? tics : "set ytics (" + tics + ")\n";
}

std::string throughput_script(const std::string& stem_path, const Series& series) {
  double low = INFINITY, high = 0;
  for (const auto& [name, rows] : series.points)
    for (const auto& [x, y, y_low, y_high] : rows) {
      low = std::min(low, y_low > 0 ? y_low : y);
      high = std::max(high, y_high);
    }
  return script(
      stem_path, 1000, 640,
      std::string(kLinePlotSettings) +
          "set title 'Throughput vs global batch (mean over kept runs, or of the trial means; 95% interval)'\n"
          "set ylabel 'samples/s'\nset logscale y 10\n"
          // Without this a log axis stretches to whole decades and the lines flatten.
          "set autoscale yfix\n" +
          log_tics(low, high),
      series_clauses(stem_path + ".dat", series));
}

// A band's or a single batch's extent on the log-2 batch axis: a band of one batch is drawn a quarter of a doubling
// either side of it, so that it shows.
std::pair<double, double> band_extent(const stats::NoDifferenceBand& band) {
  if (band.batches > 1)
    return {static_cast<double>(band.first.global_batch), static_cast<double>(band.last.global_batch)};
  const double x = static_cast<double>(band.first.global_batch);
  return {x / std::pow(2.0, 0.25), x * std::pow(2.0, 0.25)};
}

std::string speedup_script(const std::string& stem_path, const Series& series,
                           const std::vector<stats::BreakEvenAnswer>& break_evens) {
  std::map<std::string, std::string> suffix;
  std::string marks;
  int crossings = 0;
  for (const stats::BreakEvenAnswer& curve : break_evens) {
    suffix[curve.curve] = " (break-even " + stats::break_even_summary(curve.break_even) + ")";
    const auto at = std::find(series.names.begin(), series.names.end(), curve.curve);
    if (at == series.names.end()) continue;
    const std::string c = colour(static_cast<std::size_t>(at - series.names.begin()));
    // Each band of no clear difference: the batches it spans shaded in the curve's colour, behind the lines.
    for (const stats::NoDifferenceBand& band : curve.break_even.bands) {
      const auto [from, to] = band_extent(band);
      marks += "set object rect from " + number_text(from) + ", graph 0 to " + number_text(to) + ", graph 1 fc " + c +
               " fs transparent solid 0.13 noborder behind\n";
    }
    for (const stats::Crossing& crossing : curve.break_even.crossings) {
      // Each crossing: a dotted vertical line in the curve's colour, a ring where it meets speedup 1, and its 95%
      // interval as a bar along speedup 1.
      const std::string x = number_text(crossing.batch);
      marks += "set arrow from " + x + ", graph 0 to " + x + ", graph 1 nohead dt 3 lw 1.5 lc " + c + " front\n";
      marks += "set object circle at " + x + ",1 size screen 0.008 fs empty border lc " + c + " lw 2 front\n";
      if (crossing.has_interval && crossing.high > crossing.low)
        marks += "set arrow from " + number_text(crossing.low) + ",1 to " + number_text(crossing.high) +
                 ",1 heads size screen 0.006,90 lw 3 lc " + c + " front\n";
      // No tag: gnuplot numbers each label itself. Each label a line above the last, so that crossings a few batches
      // apart do not print over each other; right of its line in the left half of the batches, left of it in the
      // right half, so that it stays inside the plot.
      const std::string height = number_text(0.04 + 0.05 * crossings++, "%.2f");
      const double middle = std::sqrt(static_cast<double>(curve.points.front().global_batch) *
                                      static_cast<double>(curve.points.back().global_batch));
      marks += "set label " + gnuplot_string(stats::crossing_text(crossing)) + " at " + x + ", graph " + height +
               (crossing.batch <= middle ? " offset char 0.6,0 left" : " offset char -0.6,0 right") + " tc " + c +
               " front\n";
    }
  }
  return script(stem_path, 1000, 640,
                std::string(kLinePlotSettings) +
                    "set title 'Speedup vs global batch (N GPUs / 1 GPU, 95% interval; shaded: no clear "
                    "difference)'\n"
                    "set ylabel 'speedup'\nset yrange [0:*]\n" +
                    marks,
                series_clauses(stem_path + ".dat", series, suffix) +
                    ", \\\n     1 with lines dt 2 lw 1.5 lc rgb '#202020' title 'speedup 1 (as fast as 1 GPU)'");
}

std::string efficiency_script(const std::string& stem_path, const Series& series) {
  return script(stem_path, 1000, 640,
                MGPU_LINE_PLOT_FRAME
                "set title 'Efficiency vs GPU count (speedup / N; 95% interval)'\nset xlabel 'GPUs'\n"
                "set ylabel 'efficiency'\nset yrange [0:*]\nset xrange [0.5:*]\nset xtics 1\n"
                "set offsets graph 0.04, graph 0.04, graph 0.06, 0\n",
                series_clauses(stem_path + ".dat", series) +
                    ", \\\n     1 with lines dt 2 lw 1.5 lc rgb '#202020' title 'perfect scaling'");
}

// One row per configuration: y, label, the phases' cumulative percentages of its own step (0, forward, + backward,
// + exposed_comm, + optimizer, + other = 100), and the text written beside the bar.
std::string phases_data(const std::vector<stats::ConfigurationStats>& configurations) {
  std::ostringstream out;
  out << "# y label";
  for (const stats::BreakdownPhase p : stats::kStackedPhases)
    out << " until_" << stats::kBreakdownPhaseNames[static_cast<int>(p)];
  out << " start text\n";
  for (std::size_t i = 0; i < configurations.size(); ++i) {
    const stats::ConfigurationStats& s = configurations[i];
    const bool measured = !std::isnan(s.phase(stats::BreakdownPhase::forward));
    out << i << " " << gnuplot_string(s.label) << " 0";
    double until = 0;
    for (const stats::BreakdownPhase p : stats::kStackedPhases) {
      until += measured ? 100 * std::max(0.0, s.share(p)) : 0;
      out << " " << number_text(std::min(until, 100.0));
    }
    const int ranks = s.results->ranks();
    out << " "
        << gnuplot_string(number_text(s.mean_step_ms, "%.4g") + " ms, " + std::to_string(ranks) +
                          (ranks == 1 ? " GPU" : " GPUs") + (measured ? "" : " (phases not measured)"))
        << "\n";
  }
  return out.str();
}

std::string phases_script(const std::string& stem_path, const std::vector<stats::ConfigurationStats>& configurations) {
  std::size_t longest = 10;
  for (const stats::ConfigurationStats& s : configurations) longest = std::max(longest, characters(s.label));
  const int bars = static_cast<int>(configurations.size());
  // Every label fits: the left margin is as wide as the longest one; the step time sits right of 100%.
  const int width = static_cast<int>(8 * longest) + 1050;
  const int height = 170 + 34 * bars;
  std::string settings =
      "set title " +
      gnuplot_string("Mean step by phase: share of each configuration's own step (critical rank); step time at right") +
      "\nset border 3 lc rgb '#404040'\nset grid x lc rgb '#d0d0d0'\nset xtics nomirror 0,20,100 format '%g%%'\n"
      "set ytics nomirror scale 0\nset xrange [0:130]\nset yrange [" +
      number_text(bars - 0.4) + ":-0.6]\nset lmargin " + std::to_string(longest + 3) +
      "\nset key below left horizontal reverse Left samplen 1.5 width 1\nset style fill solid 0.92 border lc rgb "
      "'white'\n";
  const std::string data = gnuplot_string(stem_path + ".dat");
  std::string plot;
  for (std::size_t j = 0; j < stats::kStackedPhases.size(); ++j) {
    const std::string from = std::to_string(3 + j), to = std::to_string(4 + j);
    plot += (j > 0 ? ", \\\n     " : "") + data + " using (($" + from + "+$" + to + ")/2):1:" + from + ":" + to +
            ":($1-0.36):($1+0.36)" + (j == 0 ? ":ytic(2)" : "") + " with boxxyerror lc " +
            // "other" is no phase of its own (launch gaps, the step's end): grey, the last colour.
            (stats::kStackedPhases[j] == stats::BreakdownPhase::other ? colour(9) : colour(j)) + " title " +
            gnuplot_string(stats::kBreakdownPhaseNames[static_cast<int>(stats::kStackedPhases[j])]);
  }
  plot += ", \\\n     " + data + " using (101.5):1:9 with labels left tc rgb '#202020' notitle";
  return script(stem_path, width, height, settings, plot);
}

// Efficiency vs GPU count per model, batch and settings; empty when at most two GPU counts (1 and N) were measured.
Series efficiency_series(const stats::Answer& answer) {
  Series series;
  std::set<int> counts = {1};
  for (const stats::PairAnswer& a : answer.pairs) counts.insert(a.gpus);
  if (counts.size() <= 2) return series;
  for (const stats::PairAnswer& a : answer.pairs) {
    const stats::ScalingPair& pair = a.pair;
    const ConfigurationMetadata& m = pair.multi().results->metadata;
    const std::string settings = pair.multi().label.substr(std::min(pair.multi().label.size(), m.name.size()));
    const std::string name = m.training().model.name + " batch " + std::to_string(m.global_batch()) + settings;
    if (series.points.count(name) == 0) series.add(name, 1, 1, 1, 1);
    const double n = a.gpus;
    const stats::RatioInterval& r = pair.speedup;
    series.add(name, n, pair.efficiency, (r.has_interval ? r.low : r.ratio) / n,
               (r.has_interval ? r.high : r.ratio) / n);
  }
  return series;
}

}  // namespace

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::stringstream directories(path);
  for (std::string directory; std::getline(directories, directory, ':');) {
    if (directory.empty()) directory = ".";
    const std::string candidate = directory + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

namespace {

// Throughput vs batch, one point per configuration: its trials (the configurations of one curve and batch, in the
// order given) merged at the mean of their means with the interval over them, a configuration measured once over its
// kept runs.
Series throughput_series(const std::vector<stats::ConfigurationStats>& configurations) {
  Series series;
  for (const std::vector<const stats::ConfigurationStats*>& group : trial_groups(configurations)) {
    std::vector<double> means;
    for (const stats::ConfigurationStats* s : group) means.push_back(s->throughput.mean);
    const stats::SampleSummary t = group.size() >= 2 ? stats::summarize_trial_means(means) : group.front()->throughput;
    const double half = t.has_interval ? t.half_width : 0;
    series.add(series_name(*group.front()), static_cast<double>(group.front()->results->metadata.global_batch()),
               t.mean, t.mean - half, t.mean + half);
  }
  return series;
}

// The bars' labels less the settings every bar shares (the run conditions list those): a study's labels otherwise
// repeat its preset's settings on every bar.
std::vector<stats::ConfigurationStats> without_common_settings(std::vector<stats::ConfigurationStats> bars) {
  const auto words = [](const std::string& label) {
    std::vector<std::string> out;
    std::istringstream in(label);
    // The trial count, "(3 trials)", is no setting: it stays.
    for (std::string word; in >> word;)
      if (word.front() != '(' && word.back() != ')') out.push_back(word);
    return out;
  };
  std::set<std::string> common;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const std::vector<std::string> w = words(bars[i].label);
    const std::set<std::string> settings(w.begin() + std::min<std::size_t>(1, w.size()), w.end());
    if (i == 0) {
      common = settings;
      continue;
    }
    for (auto it = common.begin(); it != common.end();)
      it = settings.count(*it) != 0 ? std::next(it) : common.erase(it);
  }
  if (bars.size() < 2 || common.empty()) return bars;
  for (stats::ConfigurationStats& bar : bars) {
    std::string label;
    std::istringstream in(bar.label);
    for (std::string word; in >> word;)
      if (label.empty() || common.count(word) == 0) label += (label.empty() ? "" : " ") + word;
    bar.label = label;
  }
  return bars;
}

}  // namespace

PlotOutcome write_plots(const std::string& directory, const std::vector<stats::ConfigurationStats>& configurations,
                        const stats::Answer& answer) {
  PlotOutcome outcome;
  const std::string gnuplot = find_on_path("gnuplot");
  outcome.gnuplot_found = !gnuplot.empty();

  const Series throughput = throughput_series(configurations);
  const std::vector<stats::ConfigurationStats> bars = without_common_settings(trials_merged(configurations));
  Series speedup;
  for (const stats::PairAnswer& a : answer.pairs) {
    const stats::RatioInterval& r = a.pair.speedup;
    speedup.add(a.curve, static_cast<double>(a.global_batch), r.ratio, r.has_interval ? r.low : r.ratio,
                r.has_interval ? r.high : r.ratio);
  }
  const Series efficiency = efficiency_series(answer);

  struct Drawing {
    Plot plot;
    std::string data, script;
  };
  const auto stem_path = [&](const std::string& stem) { return directory + "/" + stem; };
  std::vector<Drawing> drawings;
  drawings.push_back({{"phases", "Where the step goes: phases as a share of each configuration's own step"},
                      phases_data(bars),
                      phases_script(stem_path("phases"), bars)});
  if (!answer.pairs.empty())
    drawings.push_back(
        {{"speedup_vs_batch",
          "Speedup of N GPUs over 1 vs global batch, with the break-even and the bands of no clear difference"},
         speedup.data(),
         speedup_script(stem_path("speedup_vs_batch"), speedup, answer.break_evens)});
  drawings.push_back({{"throughput_vs_batch", "Throughput vs global batch (log axes)"},
                      throughput.data(),
                      throughput_script(stem_path("throughput_vs_batch"), throughput)});
  if (!efficiency.names.empty())
    drawings.push_back({{"efficiency_vs_gpus", "Scaling efficiency vs GPU count"},
                        efficiency.data(),
                        efficiency_script(stem_path("efficiency_vs_gpus"), efficiency)});

  for (Drawing& drawing : drawings) {
    const std::string stem = stem_path(drawing.plot.stem);
    write_text(stem + ".dat", drawing.data);
    write_text(stem + ".gp", drawing.script);
    if (outcome.gnuplot_found) {
      run_gnuplot(gnuplot, stem + ".gp");
      drawing.plot.drawn = true;
    }
    outcome.plots.push_back(drawing.plot);
  }
  return outcome;
}

}  // namespace mgpu::analysis
