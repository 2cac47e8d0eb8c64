// ember/context.h — run-time switches (docs/design.md principle 8). Their defaults come from the
// environment through the one settings object, ember/support/settings.h: DEBUG (0-4), EMBER_DEVICE
// (cpu | interp), PROFILE (with EMBER_PROFILE_FILE), GRAPH (with EMBER_GRAPH_DIR),
// EMBER_PLAN_CACHE. The runtime's settings (EMBER_THREADS, EMBER_ISA, EMBER_CACHE_DIR, EMBER_CC)
// live there too.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

namespace ember {

struct Context {
  /// 1: one line per realize (kernels, cache hits, compile time, compiler processes) and per jit
  /// warm-up call and capture (kernels compiled, compile time); 2: one line per kernel (name,
  /// launch shape, time, FLOPs, bytes, GFLOPS, GB/s); 3: + applied optimisations; 4: + source.
  int debug = 0;
  /// Device that runs kernels: "cpu" (generated C) or "interp" (reference evaluator).
  std::string device = "cpu";
  /// Time every kernel launch into RuntimeStats::kernel_seconds without printing (benchmarks).
  bool profile_kernels = false;
  /// PROFILE=1: record every kernel launch and ProfilePhase into the trace (ember/profile.h); a
  /// process started with PROFILE=1 writes it to `profile_path` at exit.
  bool profile = false;
  /// EMBER_PROFILE_FILE, default "ember-trace-<pid>.json" in the working directory.
  std::string profile_path;
  /// GRAPH=1: every realize writes realize-<n>.ops.dot (the op graph below its roots),
  /// realize-<n>.kernels.dot (its kernels and the buffers between them) and realize-<n>.fused.dot
  /// (the op graph, each kernel a cluster around its ops) into `graph_dir`, for the
  /// first kMaxGraphRealizes realizes of the process.
  bool graph = false;
  /// EMBER_GRAPH_DIR, default "ember-graph" in the working directory (created if missing).
  std::string graph_dir = "ember-graph";
  static constexpr int kMaxGraphRealizes = 1000;
  /// Reuse a realize's schedule and programs for a later realize of the same graph on other
  /// buffers (engine/plan_cache.h). EMBER_PLAN_CACHE=0 turns it off (for comparisons).
  bool plan_cache = true;
  /// BEAM=n: schedule search (issue 40). Each kernel a realize launches that the tune cache lacks
  /// is timed under plans one action after another from the heuristic's, a beam of n kept per
  /// round, and the fastest plan (never one measured slower than the heuristic's) is used and
  /// kept in <kernel cache directory>/tune.sqlite, keyed by the kernel, CPU, ISA level, thread
  /// count, compiler and flags, and ember's version. 0: no search; plans already in the cache
  /// are used either way (`ember tune --list` shows them).
  int beam = 0;
  /// EMBER_BEAM_RUNS: timed samples per candidate (after one warm-up launch; a sample is as many
  /// launches as take 20 us); the median is kept.
  int beam_runs = 5;
  /// The search's time limit per kernel, in seconds (compiles and timing together).
  double beam_seconds = 60;

  /// The process-wide context (defaults from support::settings() on first use; ValueError when an
  /// environment variable is malformed).
  static Context& get();
};

/// Sets Context::get().device for a scope and restores the previous device when the scope ends,
/// also by an exception (as c10::DeviceGuard does for the current device). Not for sharing across
/// threads: the context is process-wide.
class DeviceGuard {
 public:
  explicit DeviceGuard(std::string device)
      : prev_(std::exchange(Context::get().device, std::move(device))) {}
  ~DeviceGuard() { Context::get().device = std::move(prev_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  std::string prev_;
};

/// Counters since process start (or the last reset), for tests and benchmarks. Realizes on
/// several threads add to them atomically, so none is lost; a copy taken while another thread
/// realizes reads each field at a slightly different moment.
struct RuntimeStats {
  int64_t realizes = 0;
  int64_t kernels_launched = 0;  // by realizes and by jit replays
  int64_t kernels_compiled = 0;  // programs built (memory-cache misses)
  int64_t disk_cache_hits = 0;   // compiler runs avoided by the on-disk cache
  int64_t compiler_runs = 0;     // compiler processes started (compile jobs and links)
  int64_t compile_batches = 0;   // schedules whose missing kernels went to the device as one batch
  /// Of kernels_compiled (cpu device): kernels the compiler built, and kernels whose object was
  /// found in the on-disk cache.
  int64_t kernels_from_compiler = 0;
  int64_t kernels_from_disk_cache = 0;
  double compile_seconds = 0;  // wall time in the device's compile (disk-cache loads included)
  /// Of compile_seconds and kernels_compiled: compiled ahead of need by compile-only realizes
  /// (engine CompileOnly; the trainer's first update, compiled during the first collection).
  double compile_ahead_seconds = 0;
  int64_t kernels_compiled_ahead = 0;
  double kernel_seconds = 0;
  /// Copies of buffers made before an in-place write because a lazy value outside it still
  /// read the old contents (realized in-place ops, checkpoint loads).
  int64_t buffers_preserved = 0;
  /// Realizes that ran a cached plan (no scheduling) and realizes that scheduled (with the plan
  /// cache on and GRAPH off).
  int64_t plan_cache_hits = 0;
  int64_t plan_cache_misses = 0;
  /// Kernels whose plan a schedule search chose (BEAM), and kernels whose plan came from the tune
  /// cache instead.
  int64_t beam_searches = 0;
  int64_t beam_cache_hits = 0;
  /// Buffer copies between host and device memory (devices with memory of their own: opencl):
  /// Tensor::to, reads of a device tensor's data, and the host buffers that a realize on such a
  /// device copies in and its outputs out (Context::device = "opencl" on host tensors).
  int64_t copies_to_device = 0;
  int64_t copies_to_host = 0;
};
RuntimeStats& runtime_stats();
void reset_runtime_stats();
/// A copy of runtime_stats() whose fields are read atomically: race-free while other threads
/// realize or compile (a plain copy of runtime_stats() is not).
RuntimeStats runtime_stats_snapshot();

/// Thread count of the process's one thread pool (ember/support/thread_pool.h), which runs kernel
/// launches and vector-env steps; default EMBER_THREADS or all hardware threads. ValueError for
/// n < 1. Not while another thread launches kernels or steps envs.
void set_num_threads(int n);
int get_num_threads();

/// The C compiler that builds kernels on the cpu device (path and first line of `--version`), found
/// once per process. Throws CompileError when $EMBER_CC names no executable (nor a program on
/// PATH) or, with EMBER_CC unset, none of cc, gcc and clang is on PATH. A program that writes
/// results can call it first, so that a missing compiler fails before anything is written.
std::string kernel_compiler();

/// The code-generation target kernels are built for in this process: the CPU's best vector level,
/// or the lower one $EMBER_ISA=avx512|avx2|sse2|scalar forces, with its vector width, register
/// count and cache sizes, e.g. "avx2 (256-bit, 16 registers, FMA; L1d 32 KiB, ...)".
/// Throws ValueError when $EMBER_ISA names an unknown level or one this CPU lacks.
std::string kernel_target();

}  // namespace ember
