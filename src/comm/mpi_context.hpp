// Purpose: the MPI job as the benchmark sees it: RAII init/finalize, world rank and size, node-local rank, host,
// and the collective helpers that keep every rank in agreement (so a bad input never leaves a rank hanging).
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

namespace mgpu {

// MPI_Init in the constructor, MPI_Finalize in the destructor; MPI errors return codes (checked by MGPU_MPI_CHECK)
// instead of aborting inside the library.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

struct MpiContext {
  MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // rank among the ranks on this host (place_on_host): picks the GPU
  int local_size = 1;
  std::string host;
  std::vector<std::string> hosts;  // every rank's host, in rank order
};

// Where a rank sits among the ranks of its host: its order there (which picks its GPU) and how many share the host.
struct HostPlacement {
  int local_rank = 0;
  int local_size = 1;
};
// From every rank's host name (in rank order): ranks that report the same name share a host, ordered by rank. The
// same split as MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), without its blocking collective (the names come from a
// bounded gather).
HostPlacement place_on_host(const std::vector<std::string>& hosts, int rank);
// The placement of the calling rank among the ranks of `comm` (collective over `comm`; a bounded gather of names).
HostPlacement place_on_host(MPI_Comm comm);
// This machine's host name ("unknown-host" when the system has none to give).
std::string host_name();

// Describes `comm` (world by default); also sets the rank@host origin of error messages and, for the world, the
// ranks and hosts the watchdog names.
MpiContext describe_mpi_job(MPI_Comm comm = MPI_COMM_WORLD);

// The communicator of the first `count` ranks of `parent` (same order), made by MPI_Comm_split and freed by the
// destructor. Collective over `parent`: every rank constructs it; ranks from `count` on get no communicator.
class FirstRanksCommunicator {
 public:
  FirstRanksCommunicator(const MpiContext& parent, int count);
  ~FirstRanksCommunicator();
  FirstRanksCommunicator(const FirstRanksCommunicator&) = delete;
  FirstRanksCommunicator& operator=(const FirstRanksCommunicator&) = delete;

  bool member() const noexcept { return comm_ != MPI_COMM_NULL; }
  MPI_Comm get() const noexcept { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// A barrier that sleeps instead of spinning, so that the ranks a configuration leaves out wait without taking CPU time
// from the ranks that measure. waiting_for names it in the watchdog's line; bounded = false has no deadline (a
// configuration may run for hours without the ranks it leaves out), signals and stall notices still end it.
// Collective over mpi.comm.
void barrier(const MpiContext& mpi, const std::string& waiting_for, bool bounded);

// A bounded barrier that polls without sleeping, so that the ranks leave it within microseconds of each other: the
// start of a timed section. Collective over mpi.comm.
void line_up(const MpiContext& mpi, const std::string& waiting_for);

// Every rank passes its own error message ("" when fine). If any rank has one, every rank throws UsageError with
// the lowest failing rank's message, so all ranks exit together with the same one line. A bounded wait (watchdog.hpp):
// `stage` completes the stall line's "waiting for the other ranks to agree ..." ("on the output file").
void agree_or_throw(const MpiContext& mpi, const std::string& local_error,
                    const std::string& stage = "on the job's inputs");

// Every rank gets every rank's string, in rank order (a bounded wait).
std::vector<std::string> allgather_strings(const MpiContext& mpi, const std::string& value);
// Every rank gets `value` reduced over the ranks by `op` (MPI_MIN, MPI_MAX, MPI_SUM; a bounded wait).
long long allreduce_value(const MpiContext& mpi, long long value, MPI_Op op, const std::string& waiting_for);
// Rank 0's `values` replace every other rank's (each passes a vector of the same length; a bounded wait).
void broadcast_from_root(const MpiContext& mpi, std::vector<int>& values, const std::string& waiting_for);
// Every rank gets every rank's double, in rank order (a bounded wait).
std::vector<double> allgather_doubles(const MpiContext& mpi, double value);
// Rank 0 gets every rank's `mine` (the same length on every rank), rank-major; the others an empty vector. A bounded
// wait (watchdog.hpp): a rank that never contributes stops the job.
std::vector<double> gather_doubles_to_root(const MpiContext& mpi, const std::vector<double>& mine);

// The MPI library's own version string (MPI_Get_library_version), first line.
std::string mpi_library_version();

}  // namespace mgpu
