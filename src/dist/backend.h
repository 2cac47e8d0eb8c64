// The transport under ember::dist (include/ember/dist.h): MPI (mpi_backend.cpp) or one process
// (single_process_backend.cpp), chosen at configure time. A backend defines dist.h's job functions
// (mpi_available, init, finalize, initialized, rank, world_size, barrier, abort_job) and the
// byte movers below; collectives.cpp checks arguments and handles tensors, and calls these only
// with world_size() > 1.
#pragma once

#include <cstddef>
#include <cstdlib>

namespace ember::dist::backend {

enum class Element { Float32, Float64 };

/// In place, elementwise sum over the ranks.
void all_reduce_sum(void* data, size_t count, Element element);
void broadcast(void* data, size_t bytes, int root);
/// `bytes` from every rank into recv (world_size() * bytes), in rank order.
void all_gather(const void* send, void* recv, size_t bytes);

/// True when a launcher started this process as one rank of a job: OpenMPI's mpirun
/// (OMPI_COMM_WORLD_SIZE), a PMIx launcher such as srun (PMIX_RANK), MPICH's Hydra (PMI_SIZE).
inline bool started_by_launcher() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

}  // namespace ember::dist::backend
