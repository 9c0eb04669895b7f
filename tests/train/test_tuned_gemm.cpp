// Purpose: TunedGemm's verification (GPU): every candidate the tuner produces at every GEMM shape a training step runs
// (both presets and an odd-width model, local batch 1 to 4096 around every kernel threshold, each precision) matches
// the float64 product before it may be timed, and a corrupted candidate (the MGPU_FAULT_GEMM_CANDIDATE hook) is
// rejected, reported and never chosen; with MGPU_GEMM_VERIFY=fatal it stops the program; a GEMM plan is followed; an
// SM count target keeps the product right and its own tuning; a first call that accumulates keeps C.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "platform/cuda_resources.hpp"
#include "platform/error.hpp"
#include "platform/gpu_devices.hpp"
#include "train/cuda_mlp.hpp"
#include "train/gemm/tuned_gemm.hpp"
#include "train/gemm/tuning_store.hpp"

namespace mgpu {
namespace {

class TunedGemmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (visible_cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA device visible: cudaGetDeviceCount finds no GPU (or no driver) on this machine";
  }
  void TearDown() override {
    unsetenv("MGPU_FAULT_GEMM_CANDIDATE");
    unsetenv("MGPU_FAULT_GEMM_UNWRITTEN");
    unsetenv("MGPU_GEMM_VERIFY");
  }
};

// One step of every kind the trainer runs (unfused; fused where it serves), so that every GEMM shape is tuned.
void run_every_step_kind(CudaMlp& mlp, const AdamSettings& adam) {
  DeviceBuffer<float> loss(1);
  mlp.initialize(3, 0);
  mlp.advance_step(mlp.batch(), 0, adam);
  mlp.generate_batch();
  mlp.forward();
  mlp.loss_and_gradient(loss_slots(loss));
  mlp.backward();
  mlp.adam(adam);
  if (mlp.output_head_fusable()) {
    mlp.forward_with_output_head(loss_slots(loss));
    mlp.backward_without_weight_gradients();
    mlp.adam_with_weight_gradients(adam);
  }
}

TEST_F(TunedGemmTest, EveryCandidateAtEveryStepShapeMatchesFloat64) {
  const AdamSettings adam;
  CudaStream stream;
  int shapes = 0, candidates = 0;
  const std::vector<int> batches = {1, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 1024, 4096};
  const MlpSpec odd = custom_model({37, 100, 33, 5}, 0.1);
  for (const MlpSpec& model : {preset_model("medium"), preset_model("large"), odd}) {
    for (int batch : batches) {
      for (Precision precision : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::tf32x3}) {
        // Every precision at the thresholds of our kernel (64 columns) and one large batch; fp32 everywhere.
        if (precision != Precision::fp32 && batch != 64 && batch != 65 && batch != 1024) continue;
        CudaMlp mlp(model, batch, stream.get(), precision);
        run_every_step_kind(mlp, adam);
        MGPU_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        const std::string label = model.widths_string() + " b" + std::to_string(batch) + " " + setting_name(precision);
        for (const TunedGemm::ShapeOptions& shape : mlp.gemm().shape_options()) {
          ++shapes;
          candidates += shape.checked;
          EXPECT_GT(shape.checked, 0) << label << " " << shape.shape;
          EXPECT_TRUE(shape.rejected.empty()) << label << " " << shape.shape << ": " << shape.rejected.front();
        }
      }
    }
  }
  std::cout << shapes << " GEMM shapes, " << candidates << " candidates verified" << std::endl;
  EXPECT_GT(shapes, 100);
}

// A product of its own (each test uses shapes no other test of the process tunes: the choice is process-wide).
struct Product {
  int m, n, k;
  DeviceBuffer<float> a, b, c;
  std::vector<float> host_a, host_b;
  Product(int m_, int n_, int k_, cudaStream_t stream)
      : m(m_), n(n_), k(k_), a(std::size_t(m_) * k_), b(std::size_t(k_) * n_), c(std::size_t(m_) * n_) {
    std::mt19937 random(static_cast<unsigned>(m * 7 + n * 3 + k));
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (std::size_t i = 0; i < a.size(); ++i) host_a.push_back(uniform(random));
    for (std::size_t i = 0; i < b.size(); ++i) host_b.push_back(uniform(random));
    copy_to_device(a, host_a, stream);
    copy_to_device(b, host_b, stream);
  }
  // Column-major C = A B with A stored [m, k] and B [k, n], through `gemm` (with `accumulate`, C += A B).
  void multiply(TunedGemm& gemm, bool accumulate = false) {
    gemm.multiply(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, a.data(), m, b.data(), k, c.data(), m, accumulate);
  }
  // The largest |C - (C0 + A B)| over C's elements, C0 what C held before (zero: none).
  double worst_error(cudaStream_t stream, const std::vector<float>& c0 = {}) const {
    const std::vector<float> got = copy_to_host(c, stream);
    double worst = 0.0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double exact = c0.empty() ? 0.0 : c0[std::size_t(j) * m + i];
        for (int l = 0; l < k; ++l) exact += double(host_a[std::size_t(l) * m + i]) * host_b[std::size_t(j) * k + l];
        worst = std::max(worst, std::abs(got[std::size_t(j) * m + i] - exact));
      }
    return worst;
  }
};

struct Fp32Gemm {
  explicit Fp32Gemm(GemmTunings* tunings = nullptr)
      : gemm(stream.get(), CUBLAS_COMPUTE_32F, CUDA_R_32F, workspace.data(), workspace.size(), GemmSelection::tuned,
             tunings) {}
  CudaStream stream;
  DeviceBuffer<char> workspace{std::size_t{32} << 20};
  TunedGemm gemm;
};

// Tunes the product's shape, the only one `g` has seen, with every skinny candidate made wrong by a fault hook, and
// checks that those, and only those, were rejected (each for `finding`), that none is an option and that what was
// chosen computes the product.
TunedGemm::ShapeOptions tuned_with_skinny_rejected(Fp32Gemm& g, Product& product, const std::string& finding) {
  product.multiply(g.gemm);
  const std::vector<TunedGemm::ShapeOptions> shapes = g.gemm.shape_options();
  EXPECT_EQ(shapes.size(), 1u);
  if (shapes.empty()) return {};
  const TunedGemm::ShapeOptions& shape = shapes.front();
  EXPECT_FALSE(shape.rejected.empty()) << "no skinny candidate was rejected: none at this shape, or a wrong one passed";
  for (const std::string& rejected : shape.rejected) {
    EXPECT_EQ(rejected.rfind("skinny (", 0), 0u) << rejected;
    EXPECT_NE(rejected.find(finding), std::string::npos) << rejected;
  }
  for (const std::string& option : shape.options) EXPECT_EQ(option.find("skinny"), std::string::npos) << option;
  EXPECT_LE(product.worst_error(g.stream.get()), 1e-3);
  return shape;
}

TEST_F(TunedGemmTest, ACorruptedCandidateIsRejectedReportedAndNeverChosen) {
  Fp32Gemm g;
  setenv("MGPU_FAULT_GEMM_CANDIDATE", "skinny", 1);
  Product product(200, 24, 640, g.stream.get());  // few columns: our kernel's configurations are candidates too
  const TunedGemm::ShapeOptions shape = tuned_with_skinny_rejected(g, product, "beyond the float64 bound");
  EXPECT_GT(shape.checked, static_cast<int>(shape.rejected.size())) << "cuBLASLt's candidates are checked too";
  // The float64 reference and every comparison took time, which the shape counts and the whole adds up.
  EXPECT_GT(shape.verification_seconds, 0.0);
  EXPECT_EQ(g.gemm.verification_seconds(), shape.verification_seconds);
}

// Our kernel's candidates are listed after cuBLASLt's, so a skinny candidate that writes nothing would find the last
// cuBLASLt candidate's correct product in C if the tuner did not fill C with NaN before each candidate.
TEST_F(TunedGemmTest, ACandidateThatWritesNothingIsRejected) {
  Fp32Gemm g;
  setenv("MGPU_FAULT_GEMM_UNWRITTEN", "skinny", 1);
  Product product(216, 20, 512, g.stream.get());
  tuned_with_skinny_rejected(g, product, ": 4320 of 4320 elements beyond");
}

TEST_F(TunedGemmTest, OptionsAreTheFirstListedTieThenTheOthersFastestFirst) {
  // A skinny shape with many candidates of near-equal speed (cuBLASLt's, their split-K variants and our kernel's).
  Fp32Gemm g;
  Product product(1024, 32, 4800, g.stream.get());
  product.multiply(g.gemm);
  const TunedGemm::ShapeOptions shape = g.gemm.shape_options().at(0);
  ASSERT_GE(shape.options.size(), 2u) << "one option only: the test proves nothing";
  ASSERT_LE(shape.options.size(), static_cast<std::size_t>(TunedGemm::kMostOptions) + 5);  // + our kernel's splits
  ASSERT_EQ(shape.alone_us.size(), shape.options.size());
  const double fastest = *std::min_element(shape.alone_us.begin(), shape.alone_us.end());
  EXPECT_LE(shape.alone_us[0], TunedGemm::kTiesWithin * fastest) << shape.options[0];
  for (std::size_t i = 1; i < shape.options.size(); ++i)
    EXPECT_LE(shape.alone_us[i], TunedGemm::kOptionsWithin * fastest) << shape.options[i];
  // Both kinds of kernel are options wherever each has a candidate near the fastest (at this shape, on H100 and H200).
  const auto has = [&](const char* kind) {
    return std::any_of(shape.options.begin(), shape.options.end(),
                       [&](const std::string& option) { return option.rfind(kind, 0) == 0; });
  };
  EXPECT_TRUE(has("skinny (") && has("cuBLASLt (")) << shape.options.front() << " ... " << shape.options.back();
  EXPECT_EQ(shape.selected, 0);
}

// A shape first met by a call that adds to C (beta 1: the big x big part of a tf32x3 product) is tuned on C, which
// tuning overwrites: the call must still add to what C held before it.
TEST_F(TunedGemmTest, AnAccumulatingFirstCallAddsToWhatCHeld) {
  Fp32Gemm g;
  Product product(384, 72, 256, g.stream.get());
  std::vector<float> c0(product.c.size());
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = 100.0f + static_cast<float>(i % 7);  // far from any product
  copy_to_device(product.c, c0, g.stream.get());
  product.multiply(g.gemm, true);
  ASSERT_EQ(g.gemm.shape_options().size(), 1u);
  EXPECT_GT(g.gemm.shape_options().front().checked, 1) << "the shape was tuned by this call";
  EXPECT_LE(product.worst_error(g.stream.get(), c0), 1e-3);
}

// The message a multiply refused with, or "" when it ran.
std::string refusal(Product& product, TunedGemm& gemm) {
  try {
    product.multiply(gemm);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST_F(TunedGemmTest, AShapeWithEveryCandidateRejectedIsRefused) {
  Fp32Gemm g;
  setenv("MGPU_FAULT_GEMM_CANDIDATE", "*", 1);
  Product product(96, 40, 320, g.stream.get());
  const std::string message = refusal(product, g.gemm);
  EXPECT_NE(message.find("matched the float64 product"), std::string::npos) << "refused with: '" << message << "'";
}

TEST_F(TunedGemmTest, FatalVerificationStopsAtTheFirstRejection) {
  Fp32Gemm g;
  setenv("MGPU_FAULT_GEMM_CANDIDATE", "cuBLASLt", 1);
  setenv("MGPU_GEMM_VERIFY", "fatal", 1);
  Product product(160, 48, 384, g.stream.get());
  const std::string message = refusal(product, g.gemm);
  EXPECT_NE(message.find("MGPU_GEMM_VERIFY=fatal"), std::string::npos) << "refused with: '" << message << "'";
}

// A plan (--gemm-plan) is followed: each shape runs the named candidate, its only option, verified; a plan without
// the shape, or naming a candidate this GPU does not offer, is refused with a line naming its source and the shape.
TEST_F(TunedGemmTest, APlanIsFollowedAndOneThatDoesNotFitIsRefused) {
  CudaStream setup;
  Product product(512, 20, 1536, setup.get());
  setup.synchronize();
  std::string tuned_choice;
  {
    Fp32Gemm tuned;
    product.multiply(tuned.gemm);
    // The slowest option where there are several, not what tuning chose: the plan must be what decides.
    tuned_choice = tuned.gemm.shape_options().at(0).options.back();
  }
  forget_gemm_tunings();
  const std::string shape = "NN m=512 n=20 k=1536";
  {
    Fp32Gemm followed;
    followed.gemm.follow_plan(GemmPlan{{{shape, tuned_choice}}, "plan.h5, configuration x"});
    product.multiply(followed.gemm);
    const TunedGemm::ShapeOptions ran = followed.gemm.shape_options().at(0);
    EXPECT_EQ(ran.options, std::vector<std::string>{tuned_choice});
    EXPECT_EQ(ran.checked, 1);
    EXPECT_LE(product.worst_error(followed.stream.get()), 1e-3);
  }
  forget_gemm_tunings();
  const std::vector<std::pair<GemmPlan, std::string>> misfits = {
      {GemmPlan{{{"NN m=1 n=1 k=1", tuned_choice}}, "plan.h5, configuration x"},
       "--gemm-plan plan.h5, configuration x: GEMM " + shape + " is not in the plan"},
      {GemmPlan{{{shape, "cuBLASLt (algorithm 99999, tile 0, stages 0)"}}, "plan.h5, configuration x"},
       "is not a candidate of this GPU and cuBLAS"}};
  for (const auto& [plan, expected] : misfits) {
    Fp32Gemm refused;
    refused.gemm.follow_plan(plan);
    const std::string message = refusal(product, refused.gemm);
    EXPECT_NE(message.find(expected), std::string::npos) << "refused with: '" << message << "'";
    forget_gemm_tunings();
  }
}

// A job's tunings are shared by the TunedGemms given them, and only by those: a choice selected in one is what the
// next of the same tunings runs, another job's (or the process's) tunes afresh, and cleared tunings tune afresh.
TEST_F(TunedGemmTest, TheJobsTuningsAreSharedByItsGemmsAndClearedBetweenConfigurations) {
  CudaStream setup;
  Product product(512, 20, 1536, setup.get());
  setup.synchronize();
  GemmTunings job;
  int options = 0;
  {
    Fp32Gemm first(&job);
    product.multiply(first.gemm);
    options = static_cast<int>(first.gemm.shape_options().at(0).options.size());
    if (options < 2) GTEST_SKIP() << "the shape has one option here: nothing to select";
    first.gemm.select(0, options - 1);
  }
  {
    Fp32Gemm second(&job);
    product.multiply(second.gemm);
    EXPECT_EQ(second.gemm.shape_options().at(0).selected, options - 1);
  }
  GemmTunings another_job;
  {
    Fp32Gemm other(&another_job);
    product.multiply(other.gemm);
    EXPECT_EQ(other.gemm.shape_options().at(0).selected, 0);
  }
  job.clear();
  {
    Fp32Gemm afresh(&job);
    product.multiply(afresh.gemm);
    EXPECT_EQ(afresh.gemm.shape_options().at(0).selected, 0);
  }
}

// An SM count target: the product stays right, a target the device cannot meet is refused, and a shape under a
// target is a shape of its own (tuned once, listed apart, kept per target in the job's tunings): switching back costs
// no tuning.
TEST_F(TunedGemmTest, AnSmCountTargetKeepsTheProductRightAndItsOwnTuning) {
  CudaStream setup;
  Product product(1024, 512, 2048, setup.get());
  setup.synchronize();
  GemmTunings job;
  Fp32Gemm g(&job);
  int sms = 0;
  MGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  EXPECT_THROW(g.gemm.set_sm_count_target(-1), Error);
  EXPECT_THROW(g.gemm.set_sm_count_target(sms + 1), Error);
  product.multiply(g.gemm);
  g.gemm.set_sm_count_target(sms - 16);
  EXPECT_EQ(g.gemm.sm_count_target(), sms - 16);
  product.multiply(g.gemm);
  EXPECT_LE(product.worst_error(g.stream.get()), 1e-3);
  const std::vector<TunedGemm::ShapeOptions> shapes = g.gemm.shape_options();
  ASSERT_EQ(shapes.size(), 2u);
  const std::string suffix = " for " + std::to_string(sms - 16) + " SMs";
  const auto targeted = [&](const TunedGemm::ShapeOptions& s) {
    return s.shape.size() > suffix.size() &&
           s.shape.compare(s.shape.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  EXPECT_NE(targeted(shapes[0]), targeted(shapes[1])) << shapes[0].shape << " / " << shapes[1].shape;
  EXPECT_EQ(job.store().tunings.size(), 2u);
  const int checked = g.gemm.candidates_checked();
  g.gemm.set_sm_count_target(0);
  product.multiply(g.gemm);
  EXPECT_EQ(g.gemm.candidates_checked(), checked);  // both shapes already tuned
  EXPECT_LE(product.worst_error(g.stream.get()), 1e-3);
}

}  // namespace
}  // namespace mgpu
