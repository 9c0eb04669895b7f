// Purpose: series_name (series.hpp).
#include "series.hpp"

#include <algorithm>

namespace mgpu::analysis {

std::string series_name(const stats::ConfigurationStats& s) {
  const ConfigurationMetadata& m = s.results->metadata;
  std::string model = m.model;
  if (model == "custom") {
    model += " ";
    for (std::size_t i = 0; i < m.layer_widths.size(); ++i)
      model += (i > 0 ? "," : "") + std::to_string(m.layer_widths[i]);
  }
  // The label is the group name plus the non-default settings; the name itself carries the batch, which a curve
  // over batch must not.
  const std::string settings = s.label.substr(std::min(s.label.size(), m.name.size()));
  const int ranks = s.results->ranks();
  return model + " " + std::to_string(ranks) + (ranks == 1 ? " GPU" : " GPUs") + settings;
}

}  // namespace mgpu::analysis
