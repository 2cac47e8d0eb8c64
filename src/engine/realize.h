// The engine's realize: schedule -> programs (memory cache, batch compile) -> launch.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "runtime/device.h"
#include "schedule/schedule.h"

namespace ember::engine {

/// One launched kernel: the program and its buffers (what a jit capture records). A launch
/// without a program is a copy of buffers[1] into buffers[0].
struct Launch {
  std::shared_ptr<runtime::Program> program;
  std::vector<std::shared_ptr<ir::Storage>> buffers;
};

/// Called for every launch while set (the jit's capture hook).
using LaunchHook = std::function<void(const Launch&)>;
void set_launch_hook(LaunchHook hook);
bool capturing();

/// Realizes graph roots in one schedule and returns the buffer that holds each root's value. A
/// root with an in-place target leaves its value in the target, which gets a new version.
/// `holders`: the node of each distinct handle (the caller's tensors) on a root's value, so that
/// the copy-on-write of in-place targets (ir/overwrite.h) does not count them as outside readers;
/// read only when a root has an in-place target (the caller may pass none otherwise).
std::vector<std::shared_ptr<ir::Storage>> realize(const std::vector<schedule::Root>& roots,
                                                  const std::vector<const ir::Node*>& holders);

/// ir::preserve_for_readers with the engine's copy launch (which a capture records), counted in
/// runtime_stats().buffers_preserved.
int preserve_for_readers(const std::vector<std::shared_ptr<ir::Storage>>& targets,
                         const std::vector<std::pair<ir::NodeRef, long>>& handles);

/// Runs one program on buffers (allocating them), with DEBUG=2 timing; queued instead while
/// launches are deferred.
void run_launch(const Launch& l);

/// Defers the kernel launches of this thread's realizes while it lives (not while a jit captures),
/// so that the kernels of all of them are compiled as one batch (one cache entry, compiler.h):
/// realizes schedule and prepare programs, and queue their launches. The queue is run, after one
/// compile of every program it needs, by finish(), at the end of the outermost scope, when host
/// code touches any buffer's memory (ir::Storage::data()), when another thread realizes, and when
/// a capture starts. Values are unchanged: launches run in their order, before anyone can look.
/// Compiles and runs the deferred launches now (nothing when there are none).
void flush_deferred();

class DeferLaunches {
 public:
  DeferLaunches();
  ~DeferLaunches();  // runs the queue (an error there is dropped: the scope is already unwinding)
  DeferLaunches(const DeferLaunches&) = delete;
  DeferLaunches& operator=(const DeferLaunches&) = delete;
  /// Leaves the scope: at the outermost, compiles and runs the queue (throws CompileError).
  void finish();

 private:
  bool active_ = false;
};
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

/// Compile-only realizes on this thread while it lives: each realize schedules its roots and
/// finds or prepares their programs exactly as it would otherwise, but launches nothing (no
/// kernel, no copy; another thread's deferred launches are not run), so the buffers it returns
/// hold undefined values. finish() compiles the programs that no cache held as one batch (one
/// cache entry, compiler.h) and adds them to the program cache, so that later realizes of the
/// same kernels, on any thread, find them compiled. For compiling a computation's kernels ahead,
/// on another thread, from throwaway tensors of the real shapes (rl::PpoLearner::compile_ahead):
/// a capture on another thread does not record these realizes. Leaving the scope without
/// finish() compiles nothing; a nested scope is inert.
class CompileOnly {
 public:
  CompileOnly();
  ~CompileOnly();
  CompileOnly(const CompileOnly&) = delete;
  CompileOnly& operator=(const CompileOnly&) = delete;
  /// Ends the scope and compiles; returns what that cost (throws CompileError).
  CompileTally finish();

 private:
  std::unique_ptr<struct CompileOnlyState> state_;
};

/// Whether the calling thread is in a CompileOnly scope.
bool compile_only();

/// A copy launch: src's data into dst (recorded by a jit capture like any launch).
void copy_storage(const std::shared_ptr<ir::Storage>& dst, const std::shared_ptr<ir::Storage>& src);

}  // namespace ember::engine
