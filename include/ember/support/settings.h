// ember/support/settings.h — the process's settings from the environment, read in this one place
// (part of the support floor: the runtime, the engine's Context and the thread pool take their
// values from here, never from getenv). README.md, "Seeing what runs", lists the variables.
#pragma once
#include <string>

namespace ember::support {

struct Settings {
  int debug = 0;               // DEBUG=0..4
  std::string device = "cpu";  // EMBER_DEVICE
  int threads = 0;             // EMBER_THREADS; 0: all hardware threads
  std::string isa;             // EMBER_ISA=avx512|avx2|sse2|scalar; empty: the CPU's best
  std::string cache_dir;       // EMBER_CACHE_DIR; empty: the default (runtime/cpu/compiler.h)
  std::string cc;              // EMBER_CC; empty: cc, gcc or clang on PATH
  bool profile = false;        // PROFILE=0|1
  std::string profile_file;    // EMBER_PROFILE_FILE; empty: ember-trace-<pid>.json
  bool graph = false;          // GRAPH=0|1
  std::string graph_dir = "ember-graph";  // EMBER_GRAPH_DIR
  bool plan_cache = true;                 // EMBER_PLAN_CACHE=0|1
  int beam = 0;                           // BEAM=n: schedule search with a beam of n plans (0: off)
  int beam_runs = 5;  // EMBER_BEAM_RUNS: timed samples per candidate plan (the median is kept)
  int fail_thread_start = 0;  // EMBER_TEST_FAIL_THREAD_START=i: worker i fails to start (tests)

  /// Reads the variables now. An unset or empty variable keeps the default. Throws ValueError
  /// naming the variable and the accepted values when a number is malformed (e.g. DEBUG=yes,
  /// EMBER_THREADS=0). EMBER_ISA is checked where the target is detected (ember::kernel_target()).
  static Settings from_environment();
};

/// The process-wide settings, read from the environment on first use (a malformed variable throws
/// ValueError there, and again on the next call). Code and tests may change fields afterwards;
/// a field is read when it is used (the ISA level and the compiler once, the cache directory per
/// compile, the thread count when the pool starts).
Settings& settings();

}  // namespace ember::support
