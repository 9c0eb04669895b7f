// Purpose: the warning for a configuration left out for having no completed run (analysis/left_out.hpp): it names
// the file and the configuration, and gives the file's reason where there is one (a refused math check).
#include <gtest/gtest.h>

#include "left_out.hpp"

namespace {

TEST(LeftOut, NamesTheConfigurationAndTheReasonTheFileGives) {
  mgpu::ConfigurationResults configuration;
  configuration.metadata.name = "large_b32_n2_cuda";
  EXPECT_EQ(mgpu::analysis::no_completed_run_warning("t.h5", configuration),
            "mgpu_analyze: warning: 't.h5': configuration 'large_b32_n2_cuda' has no completed run; left out");
  configuration.progress.interrupted = "large_b32_n2_cuda: the math check failed: ...";
  EXPECT_EQ(mgpu::analysis::no_completed_run_warning("t.h5", configuration),
            "mgpu_analyze: warning: 't.h5': configuration 'large_b32_n2_cuda' has no completed run "
            "(large_b32_n2_cuda: the math check failed: ...); left out");
}

}  // namespace
