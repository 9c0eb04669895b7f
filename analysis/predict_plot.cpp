// Purpose: predicted speedup vs batch, measured points overlaid (predict_plot.hpp).
#include "predict_plot.hpp"

#include <filesystem>
#include <sstream>

#include "platform/error.hpp"
#include "plots.hpp"

namespace mgpu::analysis {

bool write_predicted_speedup_plot(const std::string& directory, const std::vector<PredictedCurve>& curves,
                                  const std::vector<MeasuredSpeedup>& measured) {
  const std::filesystem::path dir(directory);
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir))
    throw UsageError("--out " + directory + ": cannot create the directory");
  const std::string data_path = (dir / "predicted_speedup.dat").string();
  const std::string script_path = (dir / "predicted_speedup.gp").string();
  // One gnuplot data block per predicted GPU count, then one per GPU count of measured points.
  std::ostringstream data, plot;
  int index = 0;
  const auto add_series = [&](const std::string& title, const std::string& style) {
    plot << (index > 0 ? ", \\\n     " : "") << gnuplot_string(data_path) << " index " << index << " using 1:2 "
         << style << " title " << gnuplot_string(title);
    ++index;
  };
  for (const PredictedCurve& curve : curves) {
    data << "# predicted, " << curve.gpus << " GPUs: global_batch speedup\n";
    for (const stats::SpeedupPoint& p : curve.points) data << p.global_batch << " " << p.speedup << "\n";
    data << "\n\n";
    add_series(std::to_string(curve.gpus) + " GPUs predicted", "with linespoints");
  }
  for (const PredictedCurve& curve : curves) {
    std::ostringstream block;
    for (const MeasuredSpeedup& m : measured)
      if (m.gpus == curve.gpus) block << m.global_batch << " " << m.speedup << "\n";
    if (block.str().empty()) continue;
    data << "# measured, " << curve.gpus << " GPUs: global_batch speedup\n" << block.str() << "\n\n";
    add_series(std::to_string(curve.gpus) + " GPUs measured", "with points pointtype 7 pointsize 1.5");
  }
  const std::string settings =
      "set title 'Predicted speedup vs global batch (N GPUs / 1 GPU)'\nset xlabel 'global batch'\n"
      "set ylabel 'speedup'\nset logscale x 2\nset key left top\nset grid\n";
  const std::string plot_line =
      "plot " + plot.str() + ", \\\n     1 with lines dashtype 2 linecolor 'black' title 'speedup 1.0'\n";
  const std::string script = "set terminal pngcairo size 1000,650\nset output " +
                             gnuplot_string((dir / "predicted_speedup.png").string()) + "\n" + settings + plot_line +
                             "set terminal svg size 1000,650\nset output " +
                             gnuplot_string((dir / "predicted_speedup.svg").string()) + "\n" + plot_line;
  write_text(data_path, data.str());
  write_text(script_path, script);
  const std::string gnuplot = find_on_path("gnuplot");
  if (gnuplot.empty()) return false;
  run_gnuplot(gnuplot, script_path);
  return true;
}

}  // namespace mgpu::analysis
