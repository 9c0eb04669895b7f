// Purpose: record_configuration (configuration_record.hpp).
#include "results/configuration_record.hpp"

namespace mgpu {

void record_configuration(const Configuration& configuration, const std::string& device,
                          results_schema::ConfigurationMetadata& meta) {
  meta.configuration = configuration;
  meta.name = configuration.name(device);
  meta.device = device;
  const MlpSpec& model = configuration.model();
  meta.parameter_count = static_cast<std::int64_t>(model.parameter_count());
  meta.dense_weight_count = static_cast<std::int64_t>(model.dense_weight_count());
  meta.local_batch = configuration.global_batch() / configuration.gpus;
}

}  // namespace mgpu
