// Purpose: the step cost model's persistent step (--step-kernel; step_cost.cpp): on one GPU a probed preset's step
// is the probe's persistent launch where asked for, the faster of it and the chain under auto, the chain with
// --step-kernel chain, on more GPUs, above the largest batch the probe timed it at, and where the probe has no
// persistent units; its phases are the marked launches' shares of the one launch. Hand-computed values on a
// synthetic probe.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "model/mlp_spec.hpp"
#include "predict/step_cost.hpp"
#include "predict/step_cost_fixture.hpp"
#include "results/results_reader.hpp"

using namespace mgpu;
using namespace mgpu::predict;
namespace fixture = mgpu::step_cost_test;

namespace {

const MlpSpec kMedium = preset_model("medium");
constexpr double kGraphLaunchMs = 0.002;  // the fixture's

// Every chain unit of medium (the fixture's) is 1 us at batch 16 and 2 us at 64: the default one-GPU step at batch 16
// (fused, with the output head) is 7 of them, 7 us.
constexpr double kChainStepAt16Ms = 0.007;

// The persistent launches at batch 16 and 64: the whole step, and its marked launches (forward, backward, update),
// which add up to more than the whole (three launches).
struct PersistentTimes {
  double whole, forward, backward, update;
};

class PersistentStepCostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/mgpu_step_cost_persistent_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    const std::string file = dir_ + "/probe.h5";
    fixture::write_probe_and_sweep(file);
    curve_ = allreduce_curve(read_allreduce_sweep(file));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A probe with medium's chain units and, where `persistent` is not empty, the persistent units at those batches.
  StepCostModel model_with(const std::map<long long, PersistentTimes>& persistent) const {
    results_schema::HardwareProbe probe = fixture::probe();
    std::vector<double> ms;
    const auto add = [&](long long batch, const std::string& unit, double value) {
      probe.step_labels.push_back("medium b" + std::to_string(batch) + " " + unit);
      ms.push_back(value);
    };
    for (long long batch : {16, 64})
      for (const std::string& unit : fixture::kMediumChainUnits) add(batch, unit, batch == 16 ? 0.001 : 0.002);
    for (const auto& [batch, t] : persistent) {
      add(batch, "persistent_step", t.whole);
      add(batch, "persistent_forward", t.forward);
      add(batch, "persistent_backward", t.backward);
      add(batch, "persistent_update", t.update);
    }
    probe.step_ms = {{1, ms.size()}, ms};
    const std::string file = dir_ + "/units_" + std::to_string(++files_) + ".h5";
    write_hardware_probe(file, probe, false);
    return StepCostModel(probe_rates(read_hardware_probe(file), Precision::fp32), {curve_}, std::nullopt, false);
  }
  static Configuration one_gpu(long long batch, StepKernel kernel) {
    Configuration c = default_gpu_configuration(kMedium, 1, batch, Precision::fp32);
    c.training.step_kernel = kernel;
    return c;
  }

  std::string dir_;
  AllreduceCurve curve_;
  mutable int files_ = 0;
};

// Faster than the chain at 16 (6 us against 7), slower at 64 (20 us against the chain's 14).
const std::map<long long, PersistentTimes> kPersistent = {{16, {0.006, 0.003, 0.002, 0.003}},
                                                          {64, {0.020, 0.010, 0.010, 0.005}}};

}  // namespace

TEST_F(PersistentStepCostTest, TheDefaultOnOneGpuIsAutoAndAutoTakesTheFasterStep) {
  ASSERT_EQ(default_gpu_configuration(kMedium, 1, 16, Precision::fp32).training.step_kernel, StepKernel::automatic);
  const StepCostModel m = model_with(kPersistent);
  const StepPrediction p = m.predict(default_gpu_configuration(kMedium, 1, 16, Precision::fp32));
  EXPECT_NEAR(p.step_ms, 0.006 + kGraphLaunchMs, 1e-15);
  // The marked launches (8 us together) scaled to the one launch's 6 us.
  EXPECT_NEAR(p.forward_ms, 0.003 * 0.75, 1e-15);
  EXPECT_NEAR(p.backward_ms, 0.002 * 0.75, 1e-15);
  EXPECT_NEAR(p.optimizer_ms, 0.003 * 0.75, 1e-15);
  EXPECT_EQ(p.gemm_source, TermSource::measured);
  // At 64 the chain is faster: auto predicts it, as set-up would keep it.
  const double chain_at_64 = model_with({}).predict(one_gpu(64, StepKernel::automatic)).step_ms;
  EXPECT_NEAR(m.predict(one_gpu(64, StepKernel::automatic)).step_ms, chain_at_64, 1e-15);
}

TEST_F(PersistentStepCostTest, AskedForItRunsEvenWhereSlowerAndChainNeverRunsIt) {
  const StepCostModel m = model_with(kPersistent);
  EXPECT_NEAR(m.predict(one_gpu(64, StepKernel::persistent)).step_ms, 0.020 + kGraphLaunchMs, 1e-15);
  EXPECT_NEAR(m.predict(one_gpu(16, StepKernel::chain)).step_ms, kChainStepAt16Ms + kGraphLaunchMs, 1e-15);
}

TEST_F(PersistentStepCostTest, BetweenProbedBatchesItIsInterpolated) {
  // At 32, a third of the way from 16 to 64: whole 6 + (20 - 6) / 3 us.
  const StepPrediction p = model_with(kPersistent).predict(one_gpu(32, StepKernel::persistent));
  EXPECT_NEAR(p.step_ms, 0.006 + 0.014 / 3 + kGraphLaunchMs, 1e-15);
  EXPECT_NEAR(p.forward_ms + p.backward_ms + p.optimizer_ms, 0.006 + 0.014 / 3, 1e-15);
  EXPECT_EQ(p.gemm_source, TermSource::interpolated);
}

// Where the probe has no persistent step for the batch (above the largest it timed it at, or none at all) and on more
// GPUs than one, the chain: also when asked for, since such a run would be refused or is resolved to the chain.
TEST_F(PersistentStepCostTest, BeyondWhatTheProbeTimedAndOnMoreGpusTheChain) {
  const StepCostModel only_16 = model_with({{16, kPersistent.at(16)}});
  const StepCostModel without = model_with({});
  EXPECT_NEAR(only_16.predict(one_gpu(17, StepKernel::persistent)).step_ms,
              without.predict(one_gpu(17, StepKernel::persistent)).step_ms, 1e-15);
  EXPECT_NEAR(only_16.predict(one_gpu(16, StepKernel::persistent)).step_ms, 0.006 + kGraphLaunchMs, 1e-15);
  EXPECT_NEAR(without.predict(one_gpu(16, StepKernel::automatic)).step_ms, kChainStepAt16Ms + kGraphLaunchMs, 1e-15);
  const Configuration two_gpus = default_gpu_configuration(kMedium, 2, 32, Precision::fp32);
  EXPECT_EQ(two_gpus.training.step_kernel, StepKernel::chain);
  EXPECT_NEAR(only_16.predict(two_gpus).step_ms, without.predict(two_gpus).step_ms, 1e-15);
}
