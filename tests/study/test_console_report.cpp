// Purpose: tests of the console's set-up line (setup_text): rank 0's set-up time and the part of it that verifying
// GEMM candidates took; and the banner: its step line (the settings table's words) and what only GPUs have.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "study/console_report.hpp"

namespace {

TEST(SetupText, NamesTheSetUpTimeAloneWhereNoCandidateWasVerified) {
  EXPECT_EQ(mgpu::setup_text(0.126, 0, 0, 0.0), "0.13 s on rank 0");
}

TEST(SetupText, GivesVerificationsShareOfTheSetUp) {
  EXPECT_EQ(mgpu::setup_text(10.0, 412, 3, 0.52),
            "10.00 s on rank 0, of which 0.52 s (5.2%) verified 412 GEMM candidates (3 rejected)");
  // One candidate is enough for the clause; a set-up too short to measure gives no share rather than a division by 0.
  EXPECT_EQ(mgpu::setup_text(0.0, 1, 0, 0.0),
            "0.00 s on rank 0, of which 0.00 s (0.0%) verified 1 GEMM candidates (0 rejected)");
}

// The banner of a configuration on 2 ranks as print_banner writes it.
std::string banner(mgpu::Backend backend, const mgpu::Configuration& configuration) {
  mgpu::BannerFacts facts;
  facts.configuration = &configuration;
  facts.backend = backend;
  facts.ranks = 2;
  facts.hosts = {"node0", "node0"};
  facts.hardware.resize(2);
  facts.hardware[0].peer_topology = "to rank 1: NV18";
  facts.hardware[1].peer_topology = "to rank 0: NV18";
  char* text = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  mgpu::print_banner(out, facts);
  std::fclose(out);
  const std::string printed(text, size);
  std::free(text);
  return printed;
}

// The step line names every step option that applies in the results file's words; GEMM tuning and the links between
// the GPUs only where there are GPUs.
TEST(Banner, TheStepLineAndTheTopologyOnGpusOnly) {
  mgpu::Configuration c;
  c.gpus = 2;
  c.training.model = mgpu::preset_model("medium");
  c.training.timing = mgpu::TimingMode::interleaved;
  c.training.gemm_tuning = mgpu::GemmTuning::step;
  const std::string gpus = banner(mgpu::Backend::cuda, c);
  EXPECT_NE(gpus.find("\n# step: graph=on overlap=off fused_optimizer=off optimizer_sharding=off grad_dtype=fp32 "
                      "nccl_max_ctas=0 precision=fp32 accumulate_steps=1 timing=interleaved step_kernel=chain "
                      "gemm_tuning=step\n"),
            std::string::npos)
      << gpus;
  EXPECT_NE(gpus.find("\n# topology rank 0: to rank 1: NV18\n# topology rank 1: to rank 0: NV18\n"), std::string::npos)
      << gpus;
  c.training.graph = false;
  c.training.gemm_tuning = mgpu::GemmTuning::alone;
  const std::string cpu = banner(mgpu::Backend::cpu, c);
  EXPECT_NE(cpu.find("\n# step: graph=off overlap=off fused_optimizer=off optimizer_sharding=off grad_dtype=fp32 "
                     "nccl_max_ctas=0 precision=fp32 accumulate_steps=1 timing=interleaved\n"),
            std::string::npos)
      << cpu;
  EXPECT_EQ(cpu.find("topology"), std::string::npos) << cpu;
  // The grid's part, then every setting with a banner word: the runs a configuration makes, here its one.
  EXPECT_NE(cpu.find("\n# device cpu, ranks 2, global batch 32 (16 per rank), warm-up 10, steps 100, runs 1, seed 1\n"),
            std::string::npos)
      << cpu;
  // A GEMM plan from another file says which.
  c.training.gemm_tuning = mgpu::GemmTuning::plan;
  c.training.gemm_plan.source = "old.h5, configuration medium_b32_n2_cuda";
  EXPECT_NE(banner(mgpu::Backend::cuda, c)
                .find("gemm_tuning=plan (GEMM plan from old.h5, configuration medium_b32_n2_cuda)\n"),
            std::string::npos);
}

}  // namespace
