// The env generator (xoshiro256++ seeded by splitmix64) and the injectable stream.
#include <gtest/gtest.h>

#include <set>

#include "ember/rl/env.h"
#include "ember/rl/random.h"

namespace ember::rl {
namespace {

TEST(Xoshiro256, MatchesReferenceAlgorithm) {
  // Values from an independent Python transcription of splitmix64 + xoshiro256++.
  Xoshiro256 a(0);
  EXPECT_EQ(a.next_u64(), 0x53175d61490b23dfULL);
  EXPECT_EQ(a.next_u64(), 0x61da6f3dc380d507ULL);
  EXPECT_EQ(a.next_u64(), 0x5c0fdf91ec9a7bfcULL);
  Xoshiro256 b(42);
  EXPECT_EQ(b.next_u64(), 0xd0764d4f4476689fULL);
  EXPECT_EQ(b.next_u64(), 0x519e4174576f3791ULL);
}

TEST(Xoshiro256, SameSeedSameStreamAndReseeding) {
  Xoshiro256 a(7), b(7), c(8);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= x != c.next_u64();
  }
  EXPECT_TRUE(differs);
  a.seed_with(7);
  Xoshiro256 fresh(7);
  EXPECT_EQ(a.next_u64(), fresh.next_u64());
}

TEST(Xoshiro256, UniformAndIntegersStayInRange) {
  Xoshiro256 rng(3);
  std::set<int64_t> seen;
  double lo = 1, hi = 0;
  for (int i = 0; i < 20000; ++i) {
    const double u = rng.uniform(-1.0, 1.0);
    ASSERT_GE(u, -1.0);
    ASSERT_LT(u, 1.0);
    lo = std::min(lo, u), hi = std::max(hi, u);
    const int64_t k = rng.integers(-2, 3);
    ASSERT_GE(k, -2);
    ASSERT_LT(k, 3);
    seen.insert(k);
  }
  EXPECT_LT(lo, -0.99);
  EXPECT_GT(hi, 0.99);
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_THROW(rng.integers(5, 5), EnvError);
  EXPECT_THROW(rng.integers(5, 5), ember::Error);  // the env layer speaks ember's vocabulary
}

TEST(StreamSource, ReplaysMapsAndReportsExhaustion) {
  StreamSource s({0.0, 0.5, 0.25}, {-9999, 9998});
  EXPECT_DOUBLE_EQ(s.uniform(-1, 1), -1.0);
  EXPECT_DOUBLE_EQ(s.uniform(0, 10), 5.0);
  EXPECT_DOUBLE_EQ(s.uniform(-1000, 1000), -500.0);
  EXPECT_EQ(s.integers(-9999, 9999), -9999);
  EXPECT_EQ(s.integers(-9999, 9999), 9998);
  EXPECT_EQ(s.units_used(), 3u);
  EXPECT_EQ(s.ints_used(), 2u);
  EXPECT_THROW(s.uniform(0, 1), EnvError);
  EXPECT_THROW(s.integers(0, 1), EnvError);
  StreamSource bad({}, {7});
  EXPECT_THROW(bad.integers(0, 5), EnvError);
}

}  // namespace
}  // namespace ember::rl
