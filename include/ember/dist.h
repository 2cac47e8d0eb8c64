// ember/dist.h — the communicator of data-parallel training (README, "Data-parallel training"): the
// processes ("ranks") of one job, started together by `mpirun -np N`, exchange tensors through
// MPI (OpenMPI's libmpi). Names follow torch.distributed (all_reduce, broadcast, barrier,
// all_gather, ReduceOp; init and finalize for init_process_group and destroy_process_group).
//
//   ember::dist::init();                       // rank() and world_size() from mpirun
//   ...backward...
//   ember::dist::all_reduce(flat_grad, ember::dist::ReduceOp::Mean);  // every rank: the mean
//   ember::dist::finalize();
//
// A job of one process needs nothing: without mpirun (or in a build without MPI) init() makes a
// job of one rank, and every collective is the identity (a sum over one rank).
//
// Rules of every collective (MPI's): every rank of the job calls it, in the same order, with the
// same element count, dtype and root; only the thread that called init() calls them
// (MPI_THREAD_FUNNELED). A mismatch is not detected here: MPI may fail with an error, give wrong
// values or wait forever. A rank that dies or exits without finalize() makes mpirun end the whole
// job (OpenMPI's default), so the others stop within about a second instead of waiting forever;
// a rank that meets an error it cannot recover from calls abort_job() (MPI_Abort), never
// finalize(), which would wait for ranks that are still inside a collective.
//
// Tensors: the collectives work in place on float32 or float64 tensors (DTypeError otherwise) on
// the host, as an in-place op would (ember::overwrite_in_place: lazy values built before from the
// tensor keep the old values, a jit replay bound to its buffer reads the new ones). A lazy tensor
// is realized first; a view of another tensor's buffer is refused (ValueError: pass a
// clone() and use the clone).
//
// Errors: DistributedError (error.h) when MPI reports a failure (its error text included), when
// the process was started by mpirun but this build has no MPI, and when check_replicas finds a
// difference; ValueError for a root outside [0, world_size()).
//
// Before init() and after finalize() the process is a job of one: rank() is 0, world_size() 1 and
// the collectives work as in any job of one (a library user's single-process training needs no
// init()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember::dist {

/// The reduction of all_reduce: Sum (torch's ReduceOp.SUM) or Mean (ReduceOp.AVG: the sum divided
/// by world_size()).
enum class ReduceOp { Sum, Mean };

/// True when this build has MPI (CMake found libopenmpi-dev); false: every job has one rank.
bool mpi_available();

/// Joins the job. Started by a launcher (mpirun sets OMPI_COMM_WORLD_SIZE; PMIx and Hydra
/// launchers set PMIX_RANK or PMI_SIZE): MPI_Init_thread with MPI_THREAD_FUNNELED, and MPI errors
/// returned as DistributedError instead of ending the job. Otherwise a job of one rank, without
/// MPI. Calling it again does nothing. Throws DistributedError when MPI fails to start, or when a
/// launcher started this process but the build has no MPI (each process would train alone).
void init();
/// Leaves the job (MPI_Finalize; every rank calls it, after its last collective). Nothing after
/// it may communicate; after a job of several ranks init() throws (MPI cannot start twice).
void finalize();
/// Between init() and finalize().
bool initialized();
/// This process's rank in [0, world_size()); 0 outside a job.
int rank();
/// The number of ranks; 1 outside a job.
int world_size();

/// Waits until every rank has called it.
void barrier();

/// In place: every rank's tensor becomes the elementwise sum (Mean: sum / world_size()) of the
/// ranks' tensors, reduced in float32 or float64 as its dtype. One MPI_Allreduce for the whole
/// tensor, so a flat buffer of every gradient costs one call. All ranks get the same bits
/// (ReduceOp::Sum of two values is commutative in IEEE arithmetic; OpenMPI's algorithms reduce
/// each element once and distribute it, or pair ranks symmetrically).
void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::Sum);
/// The same on host memory.
void all_reduce(std::span<float> values, ReduceOp op = ReduceOp::Sum);
void all_reduce(std::span<double> values, ReduceOp op = ReduceOp::Sum);

/// Every rank's tensors get `root`'s values, in one message for the whole list (their shapes and
/// dtypes must agree across ranks; any dtype).
void broadcast(const std::vector<Tensor>& tensors, int root = 0);
/// The same on host memory.
void broadcast(std::span<std::byte> bytes, int root = 0);

/// Every rank's `values`, concatenated in rank order (world_size() * values.size() elements), on
/// every rank.
std::vector<double> all_gather(std::span<const double> values);
std::vector<uint64_t> all_gather(std::span<const uint64_t> values);

/// A 64-bit hash (FNV-1a) of the tensors' dtypes, shapes and element bytes, in order (realizes
/// them; reads views through contiguous copies).
uint64_t tensors_hash(const std::vector<Tensor>& tensors);
/// Compares tensors_hash(tensors) across the ranks (one all_gather). Throws DistributedError on
/// every rank when they differ, naming `what` (e.g. "the parameters after epoch 3"), the first
/// rank whose hash differs from rank 0's, and both hashes. Returns every rank's hash (all equal).
std::vector<uint64_t> check_replicas(const std::vector<Tensor>& tensors, const std::string& what);

/// Ends the whole job with `code`: MPI_Abort inside a job of several ranks (mpirun stops the
/// others), std::exit(code) otherwise. For a rank that cannot go on.
[[noreturn]] void abort_job(int code);

}  // namespace ember::dist
