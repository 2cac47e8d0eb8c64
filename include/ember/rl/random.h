// Random numbers for environments: the draws an env makes, behind a small interface so that tests
// can inject a recorded stream (golden trajectories) in place of the generator.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace ember::rl {

// The two kinds of draw LunarLander makes (spec "Reset", "Step"), with NumPy's meaning:
// uniform(low, high) = low + (high - low) * u for a unit double u in [0, 1);
// integers(low, high) is uniform over [low, high).
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual double uniform(double low, double high) = 0;
  virtual int64_t integers(int64_t low, int64_t high) = 0;
};

// ember's environment generator: xoshiro256++ (Blackman & Vigna), state seeded from a 64-bit seed
// by splitmix64. Unit doubles take the top 53 bits. Same seed -> same stream on every platform.
class Xoshiro256 final : public RandomSource {
 public:
  explicit Xoshiro256(uint64_t seed = 0) { seed_with(seed); }
  void seed_with(uint64_t seed);

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }  // [0, 1)

  double uniform(double low, double high) override { return low + (high - low) * unit(); }
  int64_t integers(int64_t low, int64_t high) override;  // throws EnvError if high <= low

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// Replays a recorded stream: uniform() consumes the next unit double u (mapped as above) and
// integers() the next integer (checked to lie in [low, high)). Throws EnvError when a stream runs
// out or an integer is out of range, naming the draw index.
class StreamSource final : public RandomSource {
 public:
  StreamSource(std::vector<double> units, std::vector<int64_t> ints = {})
      : units_(std::move(units)), ints_(std::move(ints)) {}
  double uniform(double low, double high) override;
  int64_t integers(int64_t low, int64_t high) override;
  size_t units_used() const { return next_unit_; }
  size_t ints_used() const { return next_int_; }

 private:
  std::vector<double> units_;
  std::vector<int64_t> ints_;
  size_t next_unit_ = 0;
  size_t next_int_ = 0;
};

}  // namespace ember::rl
