// Purpose: the step's GEMM shapes and FLOPs (step_flops.hpp).
#include "model/step_flops.hpp"

namespace mgpu {

const char* step_gemm_kind_name(StepGemm::Kind kind) {
  switch (kind) {
    case StepGemm::Kind::forward:
      return "forward";
    case StepGemm::Kind::weight_grad:
      return "weight_grad";
    case StepGemm::Kind::input_grad:
      return "input_grad";
  }
  return "?";
}

std::vector<StepGemm> step_gemms(const MlpSpec& model, std::int64_t batch) {
  std::vector<StepGemm> gemms;
  const std::vector<DenseLayer> layers = model.layers();
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::int64_t in = layers[l].fan_in, out = layers[l].fan_out;
    const int layer = static_cast<int>(l);
    gemms.push_back({layer, StepGemm::Kind::forward, out, batch, in});
    gemms.push_back({layer, StepGemm::Kind::weight_grad, in, out, batch});
    if (l > 0) gemms.push_back({layer, StepGemm::Kind::input_grad, in, batch, out});
  }
  return gemms;
}

double step_flops(const MlpSpec& model, std::int64_t batch) {
  double flops = 0;
  for (const StepGemm& gemm : step_gemms(model, batch)) flops += gemm.flops();
  return flops;
}

}  // namespace mgpu
