// ember::dist without MPI (the build found no libopenmpi-dev): every job has one rank, so
// collectives.cpp never calls the collectives here.
#include <cstdio>
#include <string>

#include "backend.h"
#include "ember/dist.h"
#include "ember/error.h"

namespace ember::dist {
namespace {

bool g_initialized = false;

[[noreturn]] void unreachable(const char* what) {
  throw Error(std::string("dist: ") + what + " without MPI in a job of several ranks");
}

}  // namespace

bool mpi_available() { return false; }

void init() {
  if (backend::started_by_launcher())
    throw DistributedError(
        "dist::init: this process was started by mpirun (or another MPI launcher), but ember was "
        "built without MPI, so every rank would train alone; install libopenmpi-dev "
        "(scripts/install-deps.sh) and rebuild, or run without mpirun");
  g_initialized = true;
}
void finalize() { g_initialized = false; }
bool initialized() { return g_initialized; }
int rank() { return 0; }
int world_size() { return 1; }
void barrier() {}
void abort_job(int code) {
  std::fflush(nullptr);
  std::exit(code);
}

namespace backend {
void all_reduce_sum(void*, size_t, Element) { unreachable("all_reduce"); }
void broadcast(void*, size_t, int) { unreachable("broadcast"); }
void all_gather(const void*, void*, size_t) { unreachable("all_gather"); }
}  // namespace backend

}  // namespace ember::dist
