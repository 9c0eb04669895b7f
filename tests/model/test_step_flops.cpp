// Purpose: tests of the step's GEMMs and FLOPs (model/step_flops.hpp): the presets' counts by hand, the shapes of a
// small model, and the count against the GEMMs the CPU step itself calls (forward and backward of cpu_mlp.hpp, run
// on a scalar type that records each product instead of computing it).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "model/step_flops.hpp"
#include "train/cpu_mlp.hpp"

namespace mgpu {
namespace {

// large: W = 4800·1024 + 1024·1024 + 1024·512 + 512·512 + 512·256 + 256·3 = 6,882,048 dense weights, W0 = 4,915,200;
// 2 B (3 W − W0) = 31,461,888 B. medium: W = 257,984, W0 = 216,832: 1,114,240 B.
TEST(StepFlops, PresetsCountEveryGemmButTheFirstLayersInputGradient) {
  EXPECT_DOUBLE_EQ(step_flops(preset_model("large"), 32), 31461888.0 * 32);
  EXPECT_DOUBLE_EQ(step_flops(preset_model("large"), 4096), 31461888.0 * 4096);
  EXPECT_DOUBLE_EQ(step_flops(preset_model("medium"), 64), 1114240.0 * 64);
  // Below 6 W B by the first layer's input gradient: about a quarter of large's arithmetic.
  const double six_wb = 6.0 * double(preset_model("large").dense_weight_count()) * 32;
  EXPECT_NEAR(1 - step_flops(preset_model("large"), 32) / six_wb, 0.238, 1e-3);
}

TEST(StepFlops, ShapesAreTheCudaStepsColumnMajorCalls) {
  const std::vector<StepGemm> gemms = step_gemms(custom_model({5, 4, 3}, 0.0), 7);
  using K = StepGemm::Kind;
  const std::vector<std::array<std::int64_t, 5>> expected = {{0, int(K::forward), 4, 7, 5},
                                                             {0, int(K::weight_grad), 5, 4, 7},
                                                             {1, int(K::forward), 3, 7, 4},
                                                             {1, int(K::weight_grad), 4, 3, 7},
                                                             {1, int(K::input_grad), 4, 7, 3}};
  ASSERT_EQ(gemms.size(), expected.size());
  for (std::size_t g = 0; g < gemms.size(); ++g) {
    const StepGemm& s = gemms[g];
    EXPECT_EQ((std::array<std::int64_t, 5>{s.layer, int(s.kind), s.m, s.n, s.k}), expected[g]) << "GEMM " << g;
  }
  EXPECT_STREQ(step_gemm_kind_name(K::input_grad), "input_grad");
  EXPECT_DOUBLE_EQ(step_flops(custom_model({5, 4, 3}, 0.0), 7), 2.0 * 7 * (20 + 20 + 12 + 12 + 12));
}

// A scalar for the CPU step's templates whose products are recorded, not computed: unqualified gemm calls in
// cpu_mlp.hpp find recorded_gemm's overload below by argument-dependent lookup.
namespace recorded_gemm {
struct Scalar {
  double v = 0;
  Scalar() = default;
  template <typename T>
  Scalar(T value) : v(double(value)) {}  // NOLINT: implicit, as the templates assign literals
};
inline Scalar operator+(Scalar a, Scalar b) { return a.v + b.v; }
inline Scalar operator-(Scalar a, Scalar b) { return a.v - b.v; }
inline Scalar operator*(Scalar a, Scalar b) { return a.v * b.v; }
inline Scalar operator/(Scalar a, Scalar b) { return a.v / b.v; }
inline Scalar& operator+=(Scalar& a, Scalar b) { return a = a + b; }
inline bool operator<(Scalar a, Scalar b) { return a.v < b.v; }
inline bool operator>(Scalar a, Scalar b) { return a.v > b.v; }

std::vector<std::array<std::int64_t, 3>> calls;  // each product's m, n, k, sorted (row-major and column-major agree)
void gemm(bool, bool, int m, int n, int k, Scalar, const Scalar*, int, const Scalar*, int, Scalar, Scalar*, int) {
  std::array<std::int64_t, 3> dims = {m, n, k};
  std::sort(dims.begin(), dims.end());
  calls.push_back(dims);
}
}  // namespace recorded_gemm

TEST(StepFlops, EqualTheProductsTheCpuStepRuns) {
  using recorded_gemm::Scalar;
  for (const std::vector<int>& widths : {std::vector<int>{6, 5, 4, 3}, std::vector<int>{9, 2}}) {
    const MlpSpec model = custom_model(widths, 0.0);
    const int batch = 8;
    std::vector<Scalar> parameters(model.parameter_count()), gradients(model.parameter_count());
    std::vector<Scalar> x(std::size_t(batch) * model.input_width());
    std::vector<Scalar> grad_output(std::size_t(batch) * model.output_width());
    cpu::MlpActivations<Scalar> activations;
    recorded_gemm::calls.clear();
    cpu::mlp_forward(model, parameters.data(), x.data(), batch, cpu::DropoutKey{}, activations);
    cpu::mlp_backward(model, parameters.data(), x.data(), batch, activations, grad_output.data(), 0.0f,
                      gradients.data());

    std::vector<std::array<std::int64_t, 3>> counted;
    double flops = 0;
    for (const StepGemm& g : step_gemms(model, batch)) {
      std::array<std::int64_t, 3> dims = {g.m, g.n, g.k};
      std::sort(dims.begin(), dims.end());
      counted.push_back(dims);
    }
    for (const auto& dims : recorded_gemm::calls) flops += 2.0 * double(dims[0] * dims[1] * dims[2]);
    std::sort(counted.begin(), counted.end());
    std::sort(recorded_gemm::calls.begin(), recorded_gemm::calls.end());
    EXPECT_EQ(counted, recorded_gemm::calls) << model.widths_string();
    EXPECT_DOUBLE_EQ(step_flops(model, batch), flops) << model.widths_string();
  }
}

}  // namespace
}  // namespace mgpu
