// ember/compile_ahead.h — compile a computation's kernels before they are needed, without
// running them (issue 17: the first training update's kernels compile during the first
// collection instead of after it).
//
//   std::thread t([&] {
//     auto r = ember::compile_ahead([&] { step(throwaway_inputs); });  // same shapes as later
//   });
//   ...                       // other work on this thread meanwhile
//   t.join();                 // step(real_inputs) now finds its kernels compiled
//
// Inside fn every realize on the calling thread is scheduled and its programs are prepared
// exactly as they would be, but nothing is launched; at the end the programs that no cache held
// are compiled as one batch and kept, so a later realize of the same kernels (the same graph on
// other buffers, on any thread) compiles nothing. What fn computes is undefined: pass it
// throwaway tensors, never ones another thread uses. fn must not read tensor data (item,
// to_vector). A jit capture on another thread does not record these realizes.
#pragma once
#include <cstdint>
#include <functional>

namespace ember {

struct CompileAheadStats {
  int64_t kernels = 0;                  // programs compiled (memory-cache misses)
  int64_t kernels_from_disk_cache = 0;  // of those, found in the on-disk cache
  int64_t compiler_runs = 0;            // compiler processes started
  double compile_seconds = 0;           // the batch's compile (disk-cache loads included)
};

/// Runs fn with compile-only realizes (above), then compiles their kernels. Throws what fn throws
/// (then nothing is compiled) and CompileError.
CompileAheadStats compile_ahead(const std::function<void()>& fn);

}  // namespace ember
