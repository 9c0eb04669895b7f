// Purpose: hold_against (published_allreduce.hpp).
#include "stats/published_allreduce.hpp"

#include <algorithm>
#include <cmath>

#include "platform/error.hpp"

namespace mgpu::stats {

HeldTable hold_against(const PublishedTable& table) {
  const std::optional<NodeInterconnect> node = nvlink_figures(table.gpu, table.shape.gpus_per_node, table.nvls);
  if (!node) throw UsageError("published table '" + table.name + "': no NVLink figures for GPU '" + table.gpu + "'");
  HeldTable held;
  held.node = *node;
  held.nic = named_link(table.link);
  for (const PublishedTable::Row& row : table.rows) {
    if (row.bytes <= 0 || !(row.us > 0) || !std::isfinite(row.us))
      throw UsageError("published table '" + table.name + "': row of " + std::to_string(row.bytes) +
                       " bytes: expected a positive size and time");
    HeldRow out;
    out.bytes = row.bytes;
    out.published_us = row.us;
    out.candidate = fastest_candidate(row.bytes, table.shape, held.node, held.nic);
    out.predicted_us = out.candidate.ms(row.bytes) * 1e3;
    out.error = (out.predicted_us - out.published_us) / out.published_us;
    if (row.bytes < kMiB) {
      held.worst_abs_error_below_1_mib = std::max(held.worst_abs_error_below_1_mib, std::fabs(out.error));
      ++held.rows_below_1_mib;
    } else if (row.bytes <= 128 * kMiB) {
      held.worst_abs_error_1_to_128_mib = std::max(held.worst_abs_error_1_to_128_mib, std::fabs(out.error));
      ++held.rows_1_to_128_mib;
    }
    held.lowest_error = held.rows.empty() ? out.error : std::min(held.lowest_error, out.error);
    held.highest_error = held.rows.empty() ? out.error : std::max(held.highest_error, out.error);
    held.rows.push_back(out);
  }
  return held;
}

std::optional<double> carried_allreduce_error(const std::vector<PublishedTable>& tables) {
  const bool held_out =
      std::any_of(tables.begin(), tables.end(), [](const PublishedTable& t) { return !t.used_to_fit; });
  if (!held_out) return std::nullopt;
  double worst = 0;
  for (const PublishedTable& table : tables) worst = std::max(worst, hold_against(table).worst_abs_error());
  return worst;
}

}  // namespace mgpu::stats
