// Run-time C compilation with an on-disk cache of shared objects keyed by content hash.
//
// Compiler: $EMBER_CC, else the first of cc, gcc, clang on PATH; none found -> CompileError. It is
// run with an argument vector (process.h), never through a shell.
// Cache: $EMBER_CACHE_DIR, else $XDG_CACHE_HOME/ember, else ~/.cache/ember, else (no HOME)
// $TMPDIR/ember-<uid>. The key hashes the source, the compiler's identity, the flags and the CPU
// model, so a cached object is never reused for a different program. Trust, entry checks and the
// fallbacks for read-only or untrusted caches: kernel_cache.h.
#pragma once
#include <cstdint>
#include <string>

namespace ember::runtime {

struct CompilerInfo {
  std::string path;     // compiler executable
  std::string version;  // first line of `--version`
  std::string flags;
  std::string libs;  // libraries linked after the source (-lm, and -lmvec where available)
  std::string cpu;   // CPU model name
};

/// The compiler that will be used (found once); throws CompileError if there is none.
const CompilerInfo& compiler_info();

/// Compiles `source` into a shared object and dlopen()s it; returns the handle.
/// `cache_hit` reports whether the object came from the disk cache.
void* compile_and_load(const std::string& source, bool* cache_hit);

/// Compiler processes run and cache entries loaded since process start (all threads).
struct CompileCounters {
  int64_t compiler_runs = 0;
  int64_t disk_hits = 0;
};
CompileCounters compile_counters();

/// Resolves a symbol; throws CompileError if it is missing.
void* load_symbol(void* handle, const std::string& name);

/// The cache directory (absolute; see above).
std::string cache_dir();

/// The CPU model name from /proc/cpuinfo ("unknown" when it has none).
std::string cpu_model();

}  // namespace ember::runtime
