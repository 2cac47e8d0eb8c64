// ember/error.h — the typed exceptions ember throws. Every message names the values involved
// (shapes, dtypes, dims, file offsets) so that the caller can see what went wrong.
#pragma once
#include <stdexcept>
#include <string>

namespace ember {

/// Base of every ember error.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Shapes that do not broadcast, a reshape to a different element count, a bad matmul pairing.
struct ShapeError : Error {
  using Error::Error;
};
/// A dimension or index out of range.
struct IndexError : Error {
  using Error::Error;
};
/// An operation that does not accept a dtype (e.g. `exp` of a bool tensor, `&` of floats).
struct DTypeError : Error {
  using Error::Error;
};
/// A bad argument value (negative size, step 0, clamp with min > max, ...).
struct ValueError : Error {
  using Error::Error;
};
/// Run-time compilation or loading of a generated kernel failed (e.g. no C compiler found).
struct CompileError : Error {
  using Error::Error;
};
/// Reading or writing a file failed, or a file is malformed.
struct IOError : Error {
  using Error::Error;
};
/// A collective of a data-parallel job failed (ember/dist.h): MPI reported an error, or the ranks
/// disagree (replicas that diverged).
struct DistributedError : Error {
  using Error::Error;
};

}  // namespace ember
