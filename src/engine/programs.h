// Kernels to programs: the process's program cache (by device and kernel key), compiled in
// batches (one compiler run for all the missing kernels of a realize, compiler.h), or prepared for
// a later batch when the calling thread's sink batches compiles (a DeferLaunches queue, a
// CompileOnly scope).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ember/support/non_copyable.h"
#include "runtime/device.h"
#include "schedule/kernel.h"

namespace ember::engine {

/// Compilation counted on the calling thread since it started (DEBUG lines that report what one
/// call compiled, while another thread may compile too).
struct CompileTally {
  int64_t kernels = 0;  // programs built (memory-cache misses)
  double seconds = 0;
  int64_t compiler_runs = 0;
  int64_t kernels_from_compiler = 0;
  int64_t kernels_from_disk_cache = 0;
};
CompileTally compile_tally_this_thread();

/// The programs of a realize's kernels, and what finding them cost.
struct ProgramBatch {
  std::vector<std::shared_ptr<runtime::Program>> programs;  // per kernel
  size_t cached = 0;      // found in the cache (or prepared earlier in this CompileOnly scope)
  size_t missing = 0;     // distinct kernels compiled (or loaded) or prepared now
  int64_t from_disk = 0;  // of those, loaded from the on-disk kernel cache instead of compiled
  double seconds = 0;
  int64_t compiler_runs = 0;
};

/// The programs of `kernels` (simplified) on `dev`, by the calling thread's sink: from the
/// program cache, else compiled now as one batch (Launch, Record), prepared for the deferred
/// queue's batch (Queue), or for the CompileOnly scope's batch. Throws CompileError.
ProgramBatch get_programs(const std::vector<schedule::Kernel>& kernels, runtime::Device& dev);

/// Compile-only realizes on this thread while it lives: each realize schedules its roots and
/// finds or prepares their programs exactly as it would otherwise, but launches nothing (no
/// kernel, no copy; another thread's deferred launches are not run), so the buffers it returns
/// hold undefined values. finish() compiles the programs that no cache held as one batch (one
/// cache entry, compiler.h) and adds them to the program cache, so that later realizes of the
/// same kernels, on any thread, find them compiled. For compiling a computation's kernels ahead,
/// on another thread, from throwaway tensors of the real shapes (rl::PpoLearner::compile_ahead):
/// a capture on another thread does not record these realizes. Leaving the scope without
/// finish() compiles nothing; a nested scope is inert.
class CompileOnly : support::NonCopyable {
 public:
  CompileOnly();
  ~CompileOnly();
  /// Ends the scope and compiles; returns what that cost (throws CompileError).
  CompileTally finish();

 private:
  std::unique_ptr<struct CompileOnlyState> state_;
};

namespace detail {
/// Builds the deferred queue's programs as one batch (sync()); on failure forgets them in the
/// program cache (a later realize prepares them again) and rethrows. Returns the seconds and the
/// compiler processes it took.
std::pair<double, int64_t> build_queued(runtime::Device& dev,
                                        const std::vector<std::shared_ptr<runtime::Program>>& ps,
                                        const std::vector<std::string>& keys);
}  // namespace detail

}  // namespace ember::engine
