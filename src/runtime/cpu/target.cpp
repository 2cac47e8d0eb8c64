#include "runtime/cpu/target.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "ember/error.h"
#include "ember/support/settings.h"

namespace ember::runtime {

using codegen::Isa;

Isa host_isa() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // libgcc's checks include the OS's register-state support (XGETBV), not only the cpuid bits.
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
  if (__builtin_cpu_supports("sse2")) return Isa::Sse2;
#endif
  return Isa::Scalar;
}

namespace {

// "32K", "1024K", "36608K", "2M" -> bytes; 0 when unreadable.
int64_t parse_size(const std::string& s) {
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (v <= 0 || end == s.c_str()) return 0;
  if (*end == 'K') return v << 10;
  if (*end == 'M') return v << 20;
  return v;
}

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string l;
  std::getline(f, l);
  return l;
}

// Data/unified cache size of `level` from sysfs, else sysconf, else 0.
int64_t cache_size(int level) {
  for (int i = 0; i < 8; i++) {
    std::string d = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string lv = read_line(d + "level");
    if (lv.empty()) break;
    std::string type = read_line(d + "type");
    if (std::atoi(lv.c_str()) == level && (type == "Data" || type == "Unified"))
      if (int64_t b = parse_size(read_line(d + "size"))) return b;
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  long v = sysconf(level == 1   ? _SC_LEVEL1_DCACHE_SIZE
                   : level == 2 ? _SC_LEVEL2_CACHE_SIZE
                                : _SC_LEVEL3_CACHE_SIZE);
  if (v > 0) return v;
#endif
  return 0;
}

codegen::Target detect() {
  Isa host = host_isa(), isa = host;
  if (const std::string& e = support::settings().isa; !e.empty()) {
    auto want = codegen::parse_isa(e);
    if (!want)
      throw ValueError("EMBER_ISA=" + e +
                       " is not an ISA level (use avx512, avx2, sse2 or scalar)");
    if (*want > host)
      throw ValueError("EMBER_ISA=" + e + " is above this CPU's level (" + codegen::isa_name(host) +
                       ")");
    isa = *want;
  }
  int64_t l1 = cache_size(1), l2 = cache_size(2), l3 = cache_size(3);
  return codegen::make_target(isa, l1 ? l1 : 32 << 10, l2 ? l2 : 256 << 10, l3 ? l3 : 8 << 20);
}

}  // namespace

const codegen::Target& host_target() {
  static const codegen::Target t = detect();
  return t;
}

// SSE2 kernels align their loops to 64 bytes: the tiled products' k loops (~150 bytes of
// two-operand SSE code) ran up to 10% slower or faster with where the loop fell against a 64-byte
// boundary (the same instructions linked 16 to 48 bytes apart, Zen 3). With the alignment, the
// generated kernels as compiled (sse2, kernel CPU time, 1 thread, paired against the same kernels
// without it): the (128x10000)^T @ (10000x128) weight gradient 0.92-0.94x, (dz W)(1 - h^2)
// 0.92-0.93x, the other step products 0.99-1.00x. AVX2 and AVX-512 unmeasured: unchanged.
std::string target_flags(const codegen::Target& t) {
#if !defined(__x86_64__)
  if (t.isa == Isa::Scalar) return "-fno-tree-vectorize -fno-tree-slp-vectorize";
#endif
  if (t.isa == host_isa() && t.isa != Isa::Scalar)
    return t.isa == Isa::Avx512 ? "-march=native -mprefer-vector-width=512"
           : t.isa == Isa::Sse2 ? "-march=native -falign-loops=64"
                                : "-march=native";
  // The portable level's flags, indexed by Isa (scalar: x86-64 without the auto-vectoriser).
  constexpr const char* kPortable[] = {
      "-march=x86-64 -mtune=native -fno-tree-vectorize -fno-tree-slp-vectorize",
      "-march=x86-64 -mtune=native -falign-loops=64",
      "-march=x86-64-v3 -mtune=native",
      "-march=x86-64-v4 -mtune=native -mprefer-vector-width=512",
  };
  return kPortable[static_cast<int>(t.isa)];
}

}  // namespace ember::runtime
