// Purpose: the sweep's placement, NCCL's topology adapters and the scoped topology dump (sweep_placement.hpp).
#include "probes/sweep_placement.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "platform/error.hpp"

namespace mgpu {
namespace {

constexpr char kDumpVariable[] = "NCCL_TOPO_DUMP_FILE";

// The value of attribute `name` in the XML tag text `tag` (`name="value"`), or "".
std::string attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t at = tag.find(key);
  if (at == std::string::npos) return "";
  const std::size_t start = at + key.size(), end = tag.find('"', start);
  return end == std::string::npos ? "" : tag.substr(start, end - start);
}

}  // namespace

SweepPlacement placement_of(const std::vector<std::string>& hosts) {
  MGPU_REQUIRE(!hosts.empty(), "placement_of: no rank's host");
  std::map<std::string, int> ranks_on;
  for (const std::string& host : hosts) ++ranks_on[host];
  SweepPlacement placement;
  placement.nodes = static_cast<int>(ranks_on.size());
  placement.gpus_per_node = 0;
  for (const auto& [host, ranks] : ranks_on) placement.gpus_per_node = std::max(placement.gpus_per_node, ranks);
  return placement;
}

TopologyNics nics_in_topology(const std::string& xml) {
  TopologyNics nics;
  std::string names;
  for (std::size_t at = xml.find("<net "); at != std::string::npos; at = xml.find("<net ", at + 1)) {
    const std::size_t end = xml.find('>', at);
    if (end == std::string::npos) break;
    const std::string tag = xml.substr(at, end - at);
    ++nics.count;
    const std::string name = attribute(tag, "name"), speed = attribute(tag, "speed");
    std::string item = name.empty() ? "?" : name;
    // NCCL gives the speed in Mb/s.
    char* parsed_end = nullptr;
    const double mbits = speed.empty() ? 0.0 : std::strtod(speed.c_str(), &parsed_end);
    if (mbits > 0) {
      char rate[32];
      std::snprintf(rate, sizeof rate, " %g Gb/s", mbits / 1000.0);
      item += rate;
    }
    names += (names.empty() ? "" : ", ") + item;
  }
  if (nics.count > 0)
    nics.description = std::to_string(nics.count) + (nics.count == 1 ? " NIC" : " NICs") +
                       " in NCCL's topology of rank 0's node: " + names;
  return nics;
}

NcclTopologyDump::NcclTopologyDump() {
  const char* given = std::getenv(kDumpVariable);
  if (given != nullptr && *given != '\0') {
    path_ = given;  // the caller's: read it, leave it
    return;
  }
  path_ = "/tmp/mgpu_bench_nccl_topology_" + std::to_string(::getpid()) + ".xml";
  ours_ = true;
  if (setenv(kDumpVariable, path_.c_str(), 1) != 0) throw Error(std::string("setenv(") + kDumpVariable + ") failed");
  variable_set_ = true;
}

NcclTopologyDump::~NcclTopologyDump() {
  release_variable();
  if (ours_) std::remove(path_.c_str());
}

void NcclTopologyDump::release_variable() {
  if (variable_set_) unsetenv(kDumpVariable);
  variable_set_ = false;
}

TopologyNics NcclTopologyDump::nics() const {
  std::ifstream file(path_);
  if (!file) return {0, "NCCL wrote no topology to " + path_};
  std::stringstream text;
  text << file.rdbuf();
  TopologyNics nics = nics_in_topology(text.str());
  if (nics.count == 0) nics.description = "NCCL's topology of rank 0's node lists no network adapter";
  return nics;
}

}  // namespace mgpu
