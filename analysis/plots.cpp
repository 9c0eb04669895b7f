// Purpose: gnuplot data, scripts and images for the report.
#include "plots.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "platform/error.hpp"
#include "series.hpp"

namespace mgpu::analysis {

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw UsageError("cannot write '" + path + "'");
}

namespace {

// Quoted for a gnuplot string: only '"' and '\' need escaping.
std::string gnuplot_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Rows of "x y low high" per series, sorted by x; gnuplot's index selects a series (blocks separated by 2 blank lines).
struct Series {
  std::map<std::string, std::vector<std::tuple<double, double, double, double>>> points;
  void add(const std::string& name, double x, double y, double low, double high) {
    points[name].emplace_back(x, y, low, high);
  }
  std::string data() const {
    std::ostringstream out;
    out.precision(10);
    bool first = true;
    for (auto [name, rows] : points) {
      std::sort(rows.begin(), rows.end());
      if (!first) out << "\n\n";
      first = false;
      out << "# " << name << "\n";
      for (const auto& [x, y, low, high] : rows) out << x << " " << y << " " << low << " " << high << "\n";
    }
    return out.str();
  }
  std::string plot_clause(const std::string& data_file) const {
    std::string clause;
    int index = 0;
    for (const auto& entry : points) {
      clause += (index > 0 ? ", \\\n     " : "") + gnuplot_string(data_file) + " index " + std::to_string(index) +
                " using 1:2:3:4 with yerrorlines title " + gnuplot_string(entry.first);
      ++index;
    }
    return clause;
  }
};

const char kPreamble[] =
    "set terminal pngcairo size 1000,620 noenhanced font 'sans,10'\n"
    "set grid\n"
    "set key below left Left reverse\n";

// A line plot of series: settings (title, axes, ...) go between the output and the plot command, extra_plot after the
// series' clauses.
std::string line_plot_script(const std::string& data_file, const std::string& image, const Series& series,
                             const std::string& settings, const std::string& extra_plot) {
  return std::string(kPreamble) + "set output " + gnuplot_string(image) + "\n" + settings + "plot " +
         series.plot_clause(data_file) + extra_plot + "\n";
}

std::string throughput_script(const std::string& data_file, const std::string& image, const Series& series) {
  return line_plot_script(data_file, image, series,
                          "set title 'Throughput vs global batch (mean over kept runs, 95% Student-t interval)'\n"
                          "set xlabel 'global batch'\nset ylabel 'samples/s'\nset logscale x 2\nset format y '%.0f'\n"
                          "set offsets graph 0.05, graph 0.05, graph 0.05, 0\n",
                          "");
}

std::string speedup_script(const std::string& data_file, const std::string& image, const Series& series) {
  return line_plot_script(data_file, image, series,
                          "set title 'Speedup vs global batch (N GPUs / 1 GPU; Fieller 95% interval)'\n"
                          "set xlabel 'global batch'\nset ylabel 'speedup'\nset logscale x 2\n"
                          "set offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n",
                          ", \\\n     1 with lines dashtype 2 linecolor 'black' title 'speedup 1.0'");
}

std::string phases_script(const std::string& data_file, const std::string& image, std::size_t bars) {
  std::string script = std::string(kPreamble) + "set output " + gnuplot_string(image) +
                       "\nset title 'Mean step by phase (critical rank; ms)'\nset ylabel 'ms per step'\n"
                       "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.8 border -1\n"
                       "set boxwidth 0.7\nset xtics rotate by -30 left\nset yrange [0:*]\n"
                       "set bmargin " +
                       std::to_string(std::min<std::size_t>(12, 6 + bars / 2)) + "\nplot ";
  for (std::size_t i = 0; i < kStackedPhases.size(); ++i) {
    const std::string name = kBreakdownPhaseNames[static_cast<int>(kStackedPhases[i])];
    script += (i > 0 ? ", \\\n     " : "") + gnuplot_string(data_file) + " using " + std::to_string(i + 2) +
              (i == 0 ? ":xticlabels(1)" : "") + " title " + gnuplot_string(name);
  }
  return script + "\n";
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

PlotOutcome write_plots(const std::string& directory, const std::vector<ConfigurationStats>& configurations,
                        const ScalingTable& scaling) {
  PlotOutcome outcome;
  const std::string gnuplot = find_on_path("gnuplot");
  outcome.gnuplot_found = !gnuplot.empty();

  Series throughput;
  for (const ConfigurationStats& s : configurations) {
    const SampleSummary& t = s.throughput;
    const double half = t.has_interval ? t.half_width : 0;
    throughput.add(series_name(s), s.results->metadata.global_batch, t.mean, t.mean - half, t.mean + half);
  }
  Series speedup;
  for (const ScalingPair& pair : scaling.pairs) {
    const RatioInterval& r = pair.speedup;
    speedup.add(series_name(*pair.multi), pair.multi->results->metadata.global_batch, r.ratio,
                r.has_interval ? r.low : r.ratio, r.has_interval ? r.high : r.ratio);
  }
  std::ostringstream phases;
  phases.precision(10);
  phases << "# configuration";
  for (const BreakdownPhase p : kStackedPhases) phases << " " << kBreakdownPhaseNames[static_cast<int>(p)] << "_ms";
  phases << "\n";
  for (const ConfigurationStats& s : configurations) {
    phases << gnuplot_string(s.label + " (" + std::to_string(s.results->ranks()) + ")");
    for (const BreakdownPhase p : kStackedPhases) phases << " " << std::max(0.0, s.phase(p));
    phases << "\n";
  }

  struct Plot {
    std::string stem, data, script;
  };
  std::vector<Plot> plots;
  const auto stem_path = [&](const std::string& stem, const char* extension) {
    return directory + "/" + stem + extension;
  };
  plots.push_back({"throughput_vs_batch", throughput.data(),
                   throughput_script(stem_path("throughput_vs_batch", ".dat"), stem_path("throughput_vs_batch", ".png"),
                                     throughput)});
  if (!scaling.pairs.empty())
    plots.push_back(
        {"speedup_vs_batch", speedup.data(),
         speedup_script(stem_path("speedup_vs_batch", ".dat"), stem_path("speedup_vs_batch", ".png"), speedup)});
  plots.push_back({"phases", phases.str(),
                   phases_script(stem_path("phases", ".dat"), stem_path("phases", ".png"), configurations.size())});

  for (const Plot& plot : plots) {
    write_text(stem_path(plot.stem, ".dat"), plot.data);
    write_text(stem_path(plot.stem, ".gp"), plot.script);
    outcome.scripts.push_back(stem_path(plot.stem, ".gp"));
    if (!outcome.gnuplot_found) continue;
    const std::string log = stem_path(plot.stem, ".gnuplot.log");
    const std::string command = "'" + gnuplot + "' '" + stem_path(plot.stem, ".gp") + "' > '" + log + "' 2>&1";
    const int status = std::system(command.c_str());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw Error("gnuplot failed on '" + stem_path(plot.stem, ".gp") + "' (its messages: '" + log + "')");
    ::unlink(log.c_str());
    outcome.images.push_back(stem_path(plot.stem, ".png"));
  }
  return outcome;
}

}  // namespace mgpu::analysis
