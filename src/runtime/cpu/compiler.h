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
#include <vector>

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

/// Compiles a batch of kernels into one shared object (one cache entry) and dlopen()s it: the
/// translation unit is `prelude` followed by "\n" + each of `kernels` (the same text, and so the
/// same cache key, as compile_and_load of that whole unit). A batch is split into up to `jobs`
/// parts (kernels balanced by source size, kMinSourcePerJob bytes of kernel source or more per
/// part), each compiled to an object file by its own compiler process, at the same time, with
/// the same flags, then linked into the one shared object by one more; a smaller batch, or
/// jobs <= 1, is one compiler process. So the code of each kernel, and the numerics, do not
/// depend on `jobs`, nor does the key: runs with different thread counts share entries.
void* compile_and_load(const std::string& prelude, const std::vector<std::string>& kernels,
                       int jobs, bool* cache_hit);

/// A batch is split only into parts of at least this much kernel source on average (bytes).
/// Measured with GCC 12 at -O3 (AVX-512; -O2 is ~25% cheaper): a compiler process costs ~30 ms
/// before its first kernel, the link ~20 ms, and a kernel ~15-25 ms per 1,000 bytes (a
/// register-tiled product of 4-5 KB ~80-110 ms). So two jobs of 4 KB finish ~40 ms sooner than one
/// process with both, while parts of a few tiny kernels would only add the start and the link.
inline constexpr size_t kMinSourcePerJob = 4000;

/// Compiler processes run, batches compiled and cache entries loaded since process start (all
/// threads); kernels_* count the kernels in those batches.
struct CompileCounters {
  int64_t compiler_runs = 0;  // processes started (compile jobs and links)
  int64_t batches_compiled = 0;
  int64_t disk_hits = 0;
  int64_t kernels_compiled = 0;
  int64_t kernels_from_disk = 0;
};
CompileCounters compile_counters();
/// The same, counting only the compile_and_load calls made on the calling thread (what a
/// realize compiled, while another thread may compile too).
CompileCounters compile_counters_this_thread();

/// Resolves a symbol; throws CompileError if it is missing.
void* load_symbol(void* handle, const std::string& name);

/// The cache directory (absolute; see above).
std::string cache_dir();

/// The CPU model name from /proc/cpuinfo ("unknown" when it has none).
std::string cpu_model();

}  // namespace ember::runtime
