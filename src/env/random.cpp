#include "ember/rl/random.h"

#include <string>

#include "ember/rl/env.h"
#include "ember/support/splitmix64.h"

namespace ember::rl {

void Xoshiro256::seed_with(uint64_t seed) {
  // splitmix64 spreads any seed (0 included) over the 256-bit state, never all zero.
  uint64_t x = seed;
  for (uint64_t& s : s_) {
    s = support::splitmix64_mix(x += support::kSplitMix64Gamma);
  }
}

int64_t Xoshiro256::integers(int64_t low, int64_t high) {
  if (high <= low) {
    throw EnvError("integers(" + std::to_string(low) + ", " + std::to_string(high) +
                   "): empty range");
  }
  // Lemire's multiply-and-reject: unbiased over [0, range).
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * range;
  if (static_cast<uint64_t>(m) < range) {
    const uint64_t threshold = (0 - range) % range;
    while (static_cast<uint64_t>(m) < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * range;
    }
  }
  return low + static_cast<int64_t>(m >> 64);
}

double StreamSource::uniform(double low, double high) {
  if (next_unit_ >= units_.size()) {
    throw EnvError("StreamSource: uniform draw #" + std::to_string(next_unit_) +
                   " requested but the stream holds " + std::to_string(units_.size()));
  }
  return low + (high - low) * units_[next_unit_++];
}

int64_t StreamSource::integers(int64_t low, int64_t high) {
  if (next_int_ >= ints_.size()) {
    throw EnvError("StreamSource: integer draw #" + std::to_string(next_int_) +
                   " requested but the stream holds " + std::to_string(ints_.size()));
  }
  const int64_t v = ints_[next_int_];
  if (v < low || v >= high) {
    throw EnvError("StreamSource: integer draw #" + std::to_string(next_int_) + " = " +
                   std::to_string(v) + " outside [" + std::to_string(low) + ", " +
                   std::to_string(high) + ")");
  }
  ++next_int_;
  return v;
}

}  // namespace ember::rl
