// Purpose: tests of the deterministic synthetic task: reproducible by global index, independent of slicing, with
// the distributions docs/measurement.md asks for.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/synthetic_data.hpp"
#include "train/cpu_mlp.hpp"

namespace mgpu {
namespace {

TEST(SyntheticData, SampleDependsOnlyOnSeedAndGlobalIndex) {
  const int inputs = 17, outputs = 3;
  std::vector<float> whole_x(8 * inputs), whole_y(8 * outputs), part_x(3 * inputs), part_y(3 * outputs);
  cpu::generate_samples<float>(7, 100, 8, inputs, outputs, whole_x.data(), whole_y.data());
  cpu::generate_samples<float>(7, 105, 3, inputs, outputs, part_x.data(), part_y.data());  // samples 105..107
  for (int i = 0; i < 3 * inputs; ++i) EXPECT_EQ(part_x[i], whole_x[5 * inputs + i]);
  for (int i = 0; i < 3 * outputs; ++i) EXPECT_EQ(part_y[i], whole_y[5 * outputs + i]);
  std::vector<float> other_x(8 * inputs), other_y(8 * outputs);
  cpu::generate_samples<float>(8, 100, 8, inputs, outputs, other_x.data(), other_y.data());
  EXPECT_NE(other_x, whole_x);
}

TEST(SyntheticData, FeaturesAreStandardNormal) {
  const int n = 200000;
  double sum = 0, squares = 0;
  for (int i = 0; i < n; ++i) {
    const double x = synthetic::feature(3, i / 100, i % 100);
    sum += x;
    squares += x * x;
  }
  const double mean = sum / n;
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(squares / n - mean * mean, 1.0, 0.02);
}

TEST(SyntheticData, TargetsAreBoundedAndVary) {
  std::vector<float> x(64 * 50), y(64 * 3);
  cpu::generate_samples<float>(1, 0, 64, 50, 3, x.data(), y.data());
  double spread = 0;
  for (float t : y) {
    EXPECT_LT(std::fabs(t), 1.0f);
    spread += std::fabs(t);
  }
  EXPECT_GT(spread / y.size(), 0.2);  // a standard-normal projection through tanh: mean |t| is about 0.6
}

TEST(SyntheticData, DropoutKeepsOneMinusPOfUnits) {
  int kept = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) kept += synthetic::dropout_keep(1, 0, 3, 1, i / 64, i % 64, 0.3f);
  EXPECT_NEAR(double(kept) / n, 0.7, 0.01);
  // Another step draws another mask.
  int same = 0;
  for (int i = 0; i < 1000; ++i)
    same += synthetic::dropout_keep(1, 0, 3, 1, i, 0, 0.3f) == synthetic::dropout_keep(1, 0, 4, 1, i, 0, 0.3f);
  EXPECT_LT(same, 900);
}

// The kernels draw a sample's features and a layer's mask from a key mixed once: the same bits as the whole hash.
TEST(SyntheticData, HashInPartsGivesTheSameBits) {
  for (std::uint64_t i = 0; i < 1000; ++i) {
    EXPECT_EQ(rng::hash(7, rng::kFeature, i, i * 3, i * 5),
              rng::hash_extend(rng::hash_extend(rng::hash_prefix(7, rng::kFeature, i), i * 3), i * 5));
    const std::uint64_t sample = 1000003 + i;
    const auto j = static_cast<std::uint32_t>(i * 7);
    EXPECT_EQ(synthetic::feature(9, sample, j), synthetic::feature_of(synthetic::sample_key(9, sample), j));
    EXPECT_EQ(synthetic::dropout_keep(9, 2, 11, 3, sample, j, 0.3f),
              synthetic::dropout_keep_of(synthetic::dropout_key(9, 2, 11, 3), sample, j, 0.3f));
  }
}

TEST(SyntheticData, GlorotUniformInitialisation) {
  const MlpSpec model = custom_model({300, 100, 3}, 0.0);
  std::vector<double> parameters(model.parameter_count());
  cpu::initialize_parameters(model, 5, 2, parameters.data());
  const DenseLayer first = model.layers()[0];
  const double limit = std::sqrt(6.0 / (300 + 100));
  double squares = 0;
  for (std::size_t i = 0; i < first.weight_count(); ++i) {
    EXPECT_LE(std::fabs(parameters[first.weight_offset + i]), limit);
    squares += parameters[first.weight_offset + i] * parameters[first.weight_offset + i];
  }
  EXPECT_NEAR(squares / first.weight_count(), limit * limit / 3.0, limit * limit * 0.02);  // var of U(-a,a)
  for (std::size_t i = 0; i < first.bias_count(); ++i) EXPECT_EQ(parameters[first.bias_offset + i], 0.0);
  std::vector<double> other_run(parameters.size());
  cpu::initialize_parameters(model, 5, 3, other_run.data());
  EXPECT_NE(other_run, parameters);
}

}  // namespace
}  // namespace mgpu
