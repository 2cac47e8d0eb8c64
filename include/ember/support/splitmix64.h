// ember/support/splitmix64.h — the one 64-bit mixing function (part of the support floor under
// every layer: header-only, no dependencies). The generated kernels' C prelude (ember_rand in
// src/codegen/render_c.cpp) spells the same function in C.
#pragma once
#include <cstdint>

namespace ember::support {

/// splitmix64's increment: 2^64 / the golden ratio, odd.
inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ULL;

/// splitmix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014; the constants of Vigna's splitmix64.c): a bijection of 64-bit words
/// whose every output bit depends on every input bit.
constexpr uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace ember::support
