// The launch sink: what run() (launch_list.h) does with a launch list on the calling thread. One
// per thread, set by the scopes below and restored as they end; without one, lists launch now.
//  - DeferLaunches (queue): the kernels of the scope's realizes are compiled as one batch and
//    launched, in order, by sync();
//  - CompileOnly: realizes prepare their programs and launch nothing (programs.h);
//  - RecordLaunches: a jit capture sees every list its function runs, which launch now too.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "engine/launch_list.h"

namespace ember::engine {

enum class SinkMode { Launch, Queue, CompileOnly, Record };

/// The calling thread's sink.
SinkMode sink_mode();
/// Whether the calling thread records for a jit capture (RecordLaunches).
bool capturing();
/// Whether the calling thread is in a CompileOnly scope.
bool compile_only();

/// Defers the kernel launches of this thread's realizes while it lives (inert while the thread
/// records or compiles only), so that the kernels of all of them are compiled as one batch (one
/// cache entry, compiler.h): realizes schedule and prepare programs, and queue their launches.
/// The queue runs, after one compile of every program it needs, at sync(): called by finish() at
/// the end of the outermost scope, by host code before it touches buffer memory, by any thread
/// that launches, and as a capture starts. Values are unchanged: launches run in their order,
/// before anyone can look.
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

/// Sees each launch list a jit capture's function runs (the lists launch now, as without it).
struct LaunchRecorder {
  virtual ~LaunchRecorder() = default;
  /// `slots`: the buffer of each slot of `list` in this run (bound, then fresh).
  virtual void record(const LaunchList& list, std::span<const StorageRef* const> slots) = 0;
};

/// One launch with its buffers: `program` (null: a copy of buffers[1] into buffers[0]).
struct Launch {
  std::shared_ptr<runtime::Program> program;
  std::vector<StorageRef> buffers;
};

/// A recorder that keeps every launch (a jit capture; tests and benchmarks that look at the
/// kernels a computation runs). Records nothing while *paused is true.
struct LaunchLog : LaunchRecorder {
  std::vector<Launch> launches;
  const bool* paused = nullptr;
  void record(const LaunchList& list, std::span<const StorageRef* const> slots) override;
};

/// Records the calling thread's launches into `recorder` while it lives (after running the
/// deferred queue, whose launches the capture must not see).
class RecordLaunches {
 public:
  explicit RecordLaunches(LaunchRecorder& recorder);
  ~RecordLaunches();
  RecordLaunches(const RecordLaunches&) = delete;
  RecordLaunches& operator=(const RecordLaunches&) = delete;

 private:
  SinkMode prev_mode_;
  LaunchRecorder* prev_recorder_;
};

namespace detail {
/// The scopes' state of the calling thread (launch_sink.cpp, programs.cpp).
struct ThreadSink {
  SinkMode mode = SinkMode::Launch;
  int defer_depth = 0;
  LaunchRecorder* recorder = nullptr;
  struct CompileOnlyState* compile_only = nullptr;
};
ThreadSink& thread_sink();
}  // namespace detail

}  // namespace ember::engine
