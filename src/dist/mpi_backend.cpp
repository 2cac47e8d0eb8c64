// ember::dist over MPI (OpenMPI's libmpi, Debian libopenmpi-dev). The job's ranks talk on a
// duplicate of MPI_COMM_WORLD whose error handler returns the error (MPI_ERRORS_RETURN), so a
// failed call becomes a DistributedError with MPI's text instead of MPI ending the process
// silently; a dead peer still ends the job, through mpirun.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>

#include "backend.h"
#include "ember/dist.h"
#include "ember/error.h"

namespace ember::dist {
namespace {

struct State {
  bool initialized = false;  // between init() and finalize()
  bool finalized = false;
  bool owns_mpi = false;  // MPI_Init was ours (not another library's): finalize it
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
};
State g;

// MPI counts are int: larger buffers go in chunks of this many elements.
constexpr size_t kChunk = size_t{1} << 30;

void check(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw DistributedError("dist::" + what + " failed on rank " + std::to_string(g.rank) + " of " +
                         std::to_string(g.size) + ": " + std::string(text, size_t(len)));
}

}  // namespace

bool mpi_available() { return true; }

void init() {
  if (g.initialized) return;
  if (g.finalized)
    throw DistributedError("dist::init: MPI cannot start again after dist::finalize()");
  if (!backend::started_by_launcher()) {  // a job of one: no MPI (no singleton daemon, no network
                                          // setup)
    g.initialized = true;
    return;
  }
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw DistributedError("dist::init: MPI_Init_thread failed");
    g.owns_mpi = true;
  }
  check(MPI_Comm_dup(MPI_COMM_WORLD, &g.comm), "init (MPI_Comm_dup)");
  check(MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN), "init (MPI_Comm_set_errhandler)");
  check(MPI_Comm_rank(g.comm, &g.rank), "init (MPI_Comm_rank)");
  check(MPI_Comm_size(g.comm, &g.size), "init (MPI_Comm_size)");
  g.initialized = true;
}

void finalize() {
  if (!g.initialized) return;
  g.initialized = false;
  if (g.comm == MPI_COMM_NULL) return;  // a job of one, without MPI: init() may run again
  g.finalized = true;
  MPI_Comm_free(&g.comm);
  if (g.owns_mpi) MPI_Finalize();
}

bool initialized() { return g.initialized; }
// Outside a job (before init(), after finalize()): a job of one.
int rank() { return g.initialized ? g.rank : 0; }
int world_size() { return g.initialized ? g.size : 1; }

void barrier() {
  if (world_size() > 1) check(MPI_Barrier(g.comm), "barrier");
}

void abort_job(int code) {
  std::fflush(nullptr);
  if (g.initialized && g.size > 1) MPI_Abort(g.comm, code);
  std::exit(code);
}

namespace backend {

void all_reduce_sum(void* data, size_t count, Element element) {
  const MPI_Datatype type = element == Element::Float32 ? MPI_FLOAT : MPI_DOUBLE;
  const size_t width = element == Element::Float32 ? sizeof(float) : sizeof(double);
  auto* p = static_cast<char*>(data);
  for (size_t done = 0; done < count; done += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, count - done));
    check(MPI_Allreduce(MPI_IN_PLACE, p + done * width, n, type, MPI_SUM, g.comm), "all_reduce");
  }
}

void broadcast(void* data, size_t bytes, int root) {
  auto* p = static_cast<char*>(data);
  for (size_t done = 0; done < bytes; done += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, bytes - done));
    check(MPI_Bcast(p + done, n, MPI_BYTE, root, g.comm), "broadcast");
  }
}

void all_gather(const void* send, void* recv, size_t bytes) {
  if (bytes > size_t{INT_MAX})
    throw ValueError("dist::all_gather: " + std::to_string(bytes) +
                     " bytes per rank, more than MPI's int count holds");
  const int n = static_cast<int>(bytes);
  check(MPI_Allgather(send, n, MPI_BYTE, recv, n, MPI_BYTE, g.comm), "all_gather");
}

}  // namespace backend
}  // namespace ember::dist
