// Purpose: describe_standalone_conditions and its banner (the same facts the training configurations record).
#include "probes/standalone_conditions.hpp"

#include "comm/run_conditions.hpp"
#include "platform/build_info.hpp"

namespace mgpu {

results_schema::MeasurementConditions describe_standalone_conditions(const BackendChoice& choice, const MpiContext& mpi,
                                                                     const std::string& command_line) {
  results_schema::MeasurementConditions c;
  c.implementation = results_schema::kImplementation;
  c.device = backend_name(choice.backend);
  c.nccl_algo = nccl_variable_or_default("NCCL_ALGO");  // as a configuration records them (in effect)
  c.nccl_proto = nccl_variable_or_default("NCCL_PROTO");
  c.nccl_environment = nccl_environment();
  c.command_line = command_line;
  c.ranks = mpi.size;
  record_ranks_and_libraries(c, library_versions(choice.backend), mpi.hosts,
                             gather_rank_hardware(mpi, describe_rank_hardware(choice, mpi)), mpi.size);
  return c;
}

void print_standalone_banner(std::FILE* out, const std::string& title, const results_schema::MeasurementConditions& c,
                             const std::string& output_path) {
  std::fprintf(out, "# mgpu_bench %s (git %s) %s\n", project_version(), git_revision(), title.c_str());
  std::fprintf(out, "# device %s, ranks %d; NCCL %s, CUDA runtime %s, driver %s, cuBLAS %s, MPI %s\n", c.device.c_str(),
               c.ranks, c.nccl_version.c_str(), c.cuda_runtime_version.c_str(), c.cuda_driver_version.c_str(),
               c.cublas_version.c_str(), c.mpi_library_version.c_str());
  std::string environment;
  for (const std::string& variable : c.nccl_environment) environment += " " + variable;
  std::fprintf(out, "# NCCL environment:%s\n", environment.empty() ? " (none)" : environment.c_str());
  for (int r = 0; r < c.ranks; ++r)
    std::fprintf(out, "#  rank %d  %-16s  %-14s  %-14s  %s\n", r, c.hosts[r].c_str(), c.gpu_names[r].c_str(),
                 c.gpu_pci_bus_ids[r].c_str(), c.gpu_uuids[r].c_str());
  if (c.device == "cuda")
    for (int r = 0; r < c.ranks; ++r) std::fprintf(out, "# topology rank %d: %s\n", r, c.peer_topology[r].c_str());
  std::fprintf(out, "# results: %s\n#\n", output_path.c_str());
}

}  // namespace mgpu
