// Purpose: MPI start-up, node-local rank discovery and the agreement/gather helpers.
#include "comm/mpi_context.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "comm/startup_deadline.hpp"
#include "comm/watchdog.hpp"
#include "platform/error.hpp"
#include "platform/mpi_check.hpp"

namespace mgpu {

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(argc, argv) != MPI_SUCCESS) throw Error("MPI_Init failed");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

MpiSession::~MpiSession() {
  // MPI_Finalize waits for every rank: one stopped or lost holds it (startup_deadline.hpp bounds it).
  startup_deadline::begin("MPI shutdown (MPI_Finalize)");
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

HostPlacement place_on_host(const std::vector<std::string>& hosts, int rank) {
  HostPlacement placement;
  placement.local_size = 0;
  for (int r = 0; r < static_cast<int>(hosts.size()); ++r) {
    if (hosts[r] != hosts[rank]) continue;
    if (r < rank) ++placement.local_rank;
    ++placement.local_size;
  }
  return placement;
}

namespace {

// `comm` with this process's rank and the size; the rest of the description left to the caller.
MpiContext ranks_of(MPI_Comm comm) {
  MpiContext ranks;
  ranks.comm = comm;
  MGPU_MPI_CHECK(MPI_Comm_rank(comm, &ranks.rank));
  MGPU_MPI_CHECK(MPI_Comm_size(comm, &ranks.size));
  return ranks;
}

}  // namespace

HostPlacement place_on_host(MPI_Comm comm) {
  const MpiContext ranks = ranks_of(comm);
  return place_on_host(allgather_strings(ranks, host_name()), ranks.rank);
}

std::string host_name() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) return "unknown-host";
  return host;
}

MpiContext describe_mpi_job(MPI_Comm comm) {
  MpiContext mpi = ranks_of(comm);
  mpi.host = host_name();
  set_error_origin(mpi.rank, mpi.host);
  mpi.hosts = allgather_strings(mpi, mpi.host);
  const HostPlacement placement = place_on_host(mpi.hosts, mpi.rank);
  mpi.local_rank = placement.local_rank;
  mpi.local_size = placement.local_size;
  // The watchdog names ranks and sends its notices in the world (watchdog.hpp).
  if (comm == MPI_COMM_WORLD) watchdog::set_world(mpi);
  return mpi;
}

FirstRanksCommunicator::FirstRanksCommunicator(const MpiContext& parent, int count) {
  MGPU_MPI_CHECK(MPI_Comm_split(parent.comm, parent.rank < count ? 0 : MPI_UNDEFINED, parent.rank, &comm_));
  if (comm_ != MPI_COMM_NULL) MGPU_MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
}

FirstRanksCommunicator::~FirstRanksCommunicator() {
  if (comm_ != MPI_COMM_NULL) MGPU_MPI_WARN(MPI_Comm_free(&comm_));
}

void barrier(const MpiContext& mpi, const std::string& waiting_for, bool bounded) {
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Ibarrier(mpi.comm, &request));
  // Polled with a sleep: ranks that wait here take no CPU time from the ranks that measure.
  BoundedWait wait(waiting_for, bounded);
  for (int done = 0;;) {
    MGPU_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done) return;
    wait.check();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void line_up(const MpiContext& mpi, const std::string& waiting_for) {
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Ibarrier(mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, waiting_for + " (MPI_Ibarrier)"));
}

void agree_or_throw(const MpiContext& mpi, const std::string& local_error, const std::string& stage) {
  // The lowest failing rank speaks for all: find it, then broadcast its message. Each step is a bounded wait, so a
  // rank that never arrives (stopped, its node gone) ends the job naming it instead of leaving the others waiting.
  const std::string waiting_for = "the other ranks to agree " + stage;
  const int mine = local_error.empty() ? mpi.size : mpi.rank;
  int first_failing = mpi.size;
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallreduce(&mine, &first_failing, 1, MPI_INT, MPI_MIN, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, waiting_for + " (MPI_Iallreduce)"));
  if (first_failing == mpi.size) return;
  int length = mpi.rank == first_failing ? static_cast<int>(local_error.size()) : 0;
  MGPU_MPI_CHECK(MPI_Ibcast(&length, 1, MPI_INT, first_failing, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, waiting_for + " (MPI_Ibcast)"));
  std::string message(static_cast<std::size_t>(length), '\0');
  if (mpi.rank == first_failing) message = local_error;
  MGPU_MPI_CHECK(MPI_Ibcast(message.data(), length, MPI_CHAR, first_failing, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, waiting_for + " (MPI_Ibcast)"));
  throw UsageError(message);
}

std::vector<std::string> allgather_strings(const MpiContext& mpi, const std::string& value) {
  const int length = static_cast<int>(value.size());
  std::vector<int> lengths(mpi.size);
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's description (MPI_Iallgather)"));
  std::vector<int> offsets(mpi.size, 0);
  for (int r = 1; r < mpi.size; ++r) offsets[r] = offsets[r - 1] + lengths[r - 1];
  std::string joined(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
  MGPU_MPI_CHECK(MPI_Iallgatherv(value.data(), length, MPI_CHAR, joined.data(), lengths.data(), offsets.data(),
                                 MPI_CHAR, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's description (MPI_Iallgatherv)"));
  std::vector<std::string> values;
  for (int r = 0; r < mpi.size; ++r) values.push_back(joined.substr(offsets[r], lengths[r]));
  return values;
}

long long allreduce_value(const MpiContext& mpi, long long value, MPI_Op op, const std::string& waiting_for) {
  long long reduced = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallreduce(&value, &reduced, 1, MPI_LONG_LONG, op, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, waiting_for + " (MPI_Iallreduce)"));
  return reduced;
}

void broadcast_from_root(const MpiContext& mpi, std::vector<int>& values, const std::string& waiting_for) {
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Ibcast(values.data(), static_cast<int>(values.size()), MPI_INT, 0, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, waiting_for + " (MPI_Ibcast)"));
}

std::vector<double> allgather_doubles(const MpiContext& mpi, double value) {
  std::vector<double> values(mpi.size);
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Iallgather(&value, 1, MPI_DOUBLE, values.data(), 1, MPI_DOUBLE, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's description (MPI_Iallgather)"));
  return values;
}

std::vector<double> gather_doubles_to_root(const MpiContext& mpi, const std::vector<double>& mine) {
  std::vector<double> all(mpi.rank == 0 ? mine.size() * mpi.size : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  MGPU_MPI_CHECK(MPI_Igather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                             static_cast<int>(mine.size()), MPI_DOUBLE, 0, mpi.comm, &request));
  MGPU_MPI_CHECK(wait_bounded(request, "every rank's timings of the run (MPI_Igather)"));
  return all;
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MGPU_MPI_CHECK(MPI_Get_library_version(text, &length));
  std::string version(text, static_cast<std::size_t>(length));
  const std::size_t end = version.find_first_of("\r\n,");
  return version.substr(0, end);
}

}  // namespace mgpu
