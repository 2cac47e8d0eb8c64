// ember/support/splitmix64.h — the one 64-bit mixing function and the one hash-combining step, for
// C++ callers (part of the
// support floor under every layer: header-only, no dependencies). It is defined once, in
// ember/support/kernel_scalar.h, which the generated kernels' C prelude embeds.
#pragma once
#include <cstdint>

#include "ember/support/kernel_scalar.h"

namespace ember::support {

/// splitmix64's increment: 2^64 / the golden ratio, odd.
inline constexpr uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ULL;

/// splitmix64's output function (see ember_splitmix64_mix): a bijection of 64-bit words whose
/// every output bit depends on every input bit.
inline uint64_t splitmix64_mix(uint64_t z) { return ::ember_splitmix64_mix(z); }

/// Folds `v` into the running hash `h` (the boost hash_combine step, with the 64-bit golden-ratio
/// constant): the interning table's node hash and the plan cache's graph key use it. Cheap, not a
/// bijection; for hash tables, not for random numbers.
inline uint64_t hash_combine(uint64_t h, uint64_t v) {
  return h ^ (v + kSplitMix64Gamma + (h << 6) + (h >> 2));
}

}  // namespace ember::support
