// Purpose: tests of the predicted-speedup plot's data and script: one block per predicted GPU count, then the
// measured points of each GPU count that has some, each series named, PNG and SVG both asked of gnuplot.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "plots.hpp"
#include "predict_plot.hpp"

using namespace mgpu::analysis;
using namespace mgpu::stats;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST(PredictPlot, DataBlocksAndScript) {
  char pattern[] = "/tmp/mgpu_predict_plot_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = std::string(pattern) + "/plots";  // created by the call
  const std::vector<PredictedCurve> curves = {{2, {{8, 0.5}, {4096, 1.5}}}, {4, {{8, 0.25}, {4096, 2.5}}}};
  const bool drawn = write_predicted_speedup_plot(dir, curves, {{4, 4096, 2.25}});
  // Drawn exactly where gnuplot is on PATH (predict's note says so otherwise), and then both images exist.
  EXPECT_EQ(drawn, !find_on_path("gnuplot").empty());
  if (drawn) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/predicted_speedup.png"));
    EXPECT_TRUE(std::filesystem::exists(dir + "/predicted_speedup.svg"));
  }
  EXPECT_EQ(read_text(dir + "/predicted_speedup.dat"),
            "# predicted, 2 GPUs: global_batch speedup\n8 0.5\n4096 1.5\n\n\n"
            "# predicted, 4 GPUs: global_batch speedup\n8 0.25\n4096 2.5\n\n\n"
            "# measured, 4 GPUs: global_batch speedup\n4096 2.25\n\n\n");
  const std::string script = read_text(dir + "/predicted_speedup.gp");
  for (const char* part :
       {"index 0 using 1:2 with linespoints title \"2 GPUs predicted\"", "index 2 using 1:2 with points",
        "\"4 GPUs measured\"", "predicted_speedup.png", "set terminal svg", "predicted_speedup.svg"})
    EXPECT_NE(script.find(part), std::string::npos) << part << "\n" << script;
  std::filesystem::remove_all(pattern);
}
