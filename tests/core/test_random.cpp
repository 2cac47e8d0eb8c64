// The random draws' distributions (issue 39, class 3): randint is uniform over any range up to
// int64's, float64 rand has 53 random bits, float32 rand 24, and every device draws the same
// numbers. The tests are chi-square and bit-frequency tests written from the distributions'
// definitions: randint(0, 2^25) through a float32 uniform drew only even numbers (bit 0 never
// set), a modulo reduction favours the low part of a range, an unrejected multiply-shift favours
// every third value of a range of 3 * 2^62, and float64 rand through float32 left its low 29 bits
// zero. Each of those fails a test below by hundreds of standard deviations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;

constexpr int64_t kDraws = 20000;

class DeviceGuard {
 public:
  explicit DeviceGuard(const std::string& d) : prev_(Context::get().device) {
    Context::get().device = d;
  }
  ~DeviceGuard() { Context::get().device = prev_; }

 private:
  std::string prev_;
};

// The chi-square statistic's critical value at p ~ 1e-6 for `df` degrees of freedom
// (Wilson and Hilferty's cube-root normal approximation, z = 4.75).
double chi2_critical(int df) {
  const double k = 2.0 / (9.0 * df);
  return df * std::pow(1 - k + 4.75 * std::sqrt(k), 3);
}

// Pearson's chi-square of counts against equal expected counts.
double chi2_uniform(const std::vector<int64_t>& counts) {
  int64_t n = 0;
  for (auto c : counts) n += c;
  const double e = static_cast<double>(n) / static_cast<double>(counts.size());
  double s = 0;
  for (auto c : counts) s += (static_cast<double>(c) - e) * (static_cast<double>(c) - e) / e;
  return s;
}

// Every one of the low `bits` bits is set in about half of the words: within 5 standard
// deviations of n / 2 (p ~ 6e-7 per bit).
void expect_fair_bits(const std::vector<uint64_t>& words, int bits, const std::string& what) {
  const double n = static_cast<double>(words.size()), sd = std::sqrt(n) / 2;
  for (int b = 0; b < bits; b++) {
    int64_t ones = 0;
    for (auto w : words) ones += (w >> b) & 1;
    EXPECT_LT(std::abs(static_cast<double>(ones) - n / 2), 5 * sd)
        << what << ": bit " << b << " set in " << ones << " of " << words.size();
  }
}

// randint's draws as offsets from low (uint64: the full int64 range's offsets pass 2^63).
std::vector<uint64_t> offsets(int64_t low, int64_t high, int64_t n) {
  auto v = randint(low, high, {n}).to_vector<int64_t>();
  std::vector<uint64_t> o;
  for (auto x : v) {
    EXPECT_GE(x, low);
    EXPECT_LT(x, high);
    o.push_back(static_cast<uint64_t>(x) - static_cast<uint64_t>(low));
  }
  return o;
}

void expect_uniform(const std::vector<int64_t>& counts, const std::string& what) {
  const int df = static_cast<int>(counts.size()) - 1;
  EXPECT_LT(chi2_uniform(counts), chi2_critical(df)) << what;
}

// The draws counted in `classes` classes by class_of, expected equally often.
template <class ClassOf>
void expect_uniform_classes(const std::vector<uint64_t>& draws, size_t classes, ClassOf class_of,
                            const std::string& what) {
  std::vector<int64_t> counts(classes);
  for (auto x : draws) counts[class_of(x)]++;
  expect_uniform(counts, what);
}

TEST(RandomDraws, RandintOverPowerOfTwoRangesHasFairBits) {
  for (const char* device : {"cpu", "interp"}) {
    SCOPED_TRACE(device);
    DeviceGuard g(device);
    manual_seed(1);
    expect_fair_bits(offsets(0, int64_t{1} << 25, kDraws), 25, "[0, 2^25)");  // the input
    expect_fair_bits(offsets(-(int64_t{1} << 40), int64_t{1} << 40, kDraws), 41, "[-2^40, 2^40)");
    expect_fair_bits(offsets(INT64_MIN, INT64_MAX, kDraws), 63, "[INT64_MIN, INT64_MAX)");
  }
}

TEST(RandomDraws, RandintIsUniformOverWideRanges) {
  for (const char* device : {"cpu", "interp"}) {
    SCOPED_TRACE(device);
    DeviceGuard g(device);
    manual_seed(2);
    // range 3 * 2^62: a modulo reduction gives the first third of the range twice the others'
    // weight, a multiply-shift without rejection gives every value = 0 mod 3 twice the weight.
    auto o = offsets(INT64_MIN, int64_t{1} << 62, kDraws);
    expect_uniform_classes(
        o, 3, [](uint64_t x) { return x >> 62; }, "thirds of [INT64_MIN, 2^62)");
    expect_uniform_classes(
        o, 3, [](uint64_t x) { return x % 3; }, "[INT64_MIN, 2^62) mod 3");
    // range 2^64 - 1 (low INT64_MIN, high INT64_MAX): 16 equal slices and residues mod 7.
    o = offsets(INT64_MIN, INT64_MAX, kDraws);
    expect_uniform_classes(
        o, 16, [](uint64_t x) { return x >> 60; }, "sixteenths of the int64 range");
    expect_uniform_classes(
        o, 7, [](uint64_t x) { return x % 7; }, "the int64 range mod 7");
    // A range just above 2^32 (64-bit draws needed) and a small one: every value counted.
    o = offsets(5, 5 + (int64_t{1} << 32) + 3, kDraws);
    auto quarter = [](uint64_t x) { return std::min<uint64_t>(x >> 30, 3); };
    expect_uniform_classes(o, 4, quarter, "quarters of [5, 5 + 2^32 + 3)");
    expect_uniform_classes(
        o, 5, [](uint64_t x) { return x % 5; }, "[5, 5 + 2^32 + 3) mod 5");
    expect_uniform_classes(
        offsets(-3, 4, kDraws), 7, [](uint64_t x) { return x; }, "[-3, 4)");
  }
}

TEST(RandomDraws, RandOfFloat64HasFiftyThreeRandomBits) {
  for (const char* device : {"cpu", "interp"}) {
    SCOPED_TRACE(device);
    DeviceGuard g(device);
    manual_seed(3);
    for (auto [t, bits] : {std::pair{kFloat64, 53}, std::pair{kFloat32, 24}}) {
      auto v = rand({kDraws}, t).to_vector<double>();
      std::vector<uint64_t> words;
      std::vector<int64_t> tenths(10);
      for (double x : v) {
        ASSERT_TRUE(x >= 0 && x < 1) << x;
        const double w = std::ldexp(x, bits);  // an integer: x is a multiple of 2^-bits
        ASSERT_EQ(w, std::floor(w)) << x;
        words.push_back(static_cast<uint64_t>(w));
        tenths[static_cast<size_t>(x * 10)]++;
      }
      expect_fair_bits(words, bits, std::string("rand ") + dtype_name(t));
      expect_uniform(tenths, std::string("tenths of rand ") + dtype_name(t));
    }
  }
}

// The same seed gives the same numbers on cpu and interp, bit for bit: fused with arithmetic,
// under a pad (the draw masked off) and alone.
TEST(RandomDraws, EveryDeviceDrawsTheSameNumbers) {
  auto draw = [] {
    manual_seed(4);
    std::vector<Tensor> r{randint(INT64_MIN, INT64_MAX, {300}),
                          randint(-7, (int64_t{1} << 60) + 11, {3, 70}) + 1,
                          constant_pad_nd(randint(0, 3, {33}), {2, 1}),
                          rand({257}, kFloat64),
                          rand({257}, kFloat64) * 2,
                          randint(0, 100, {64}, kInt32),
                          randint(0, 2, {64}, kBool),
                          randint(-5, 5, {64}, kFloat32)};
    std::vector<std::vector<double>> f;
    std::vector<std::vector<int64_t>> i;
    for (auto& t : r) {
      if (t.is_floating_point())
        f.push_back(t.to_vector<double>());
      else
        i.push_back(t.to_vector<int64_t>());
    }
    return std::pair{f, i};
  };
  auto cpu = draw();
  DeviceGuard g("interp");
  auto interp = draw();
  EXPECT_EQ(cpu.first, interp.first);
  EXPECT_EQ(cpu.second, interp.second);
  for (auto x : cpu.second[2]) EXPECT_TRUE(x >= 0 && x < 3);
  EXPECT_EQ(cpu.second[2][0], 0);  // the pad
}

TEST(RandomDraws, JitReplayDrawsNewIntegersInRange) {
  manual_seed(5);
  auto f = jit([](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{in[0] + randint(int64_t{1} << 62, INT64_MAX, {64})};
  });
  auto z = zeros({64}, kInt64);
  std::vector<std::vector<int64_t>> seen;
  for (int i = 0; i < 3; i++) seen.push_back(f({z})[0].to_vector<int64_t>());
  for (auto& s : seen)
    for (auto x : s) EXPECT_GE(x, int64_t{1} << 62);
  EXPECT_NE(seen[0], seen[1]);
  EXPECT_NE(seen[1], seen[2]);
}

TEST(RandomDraws, RandintDtypeMustHoldTheRange) {
  EXPECT_THROW(randint(0, 257, {2}, kUInt8), ValueError);
  EXPECT_THROW(randint(-1, 5, {2}, kUInt8), ValueError);
  EXPECT_THROW(randint(0, 3, {2}, kBool), ValueError);
  EXPECT_THROW(randint(0, (int64_t{1} << 31) + 1, {2}, kInt32), ValueError);
  EXPECT_THROW(randint(5, 5, {2}), ValueError);
  EXPECT_NO_THROW(randint(0, 256, {2}, kUInt8).realize());
  EXPECT_NO_THROW(randint(INT32_MIN, int64_t{INT32_MAX} + 1, {2}, kInt32).realize());
  EXPECT_EQ(randint(0, 1, {4}).to_vector<int64_t>(), std::vector<int64_t>(4, 0));
  EXPECT_EQ(randint(INT64_MAX - 1, INT64_MAX, {2}).to_vector<int64_t>(),
            std::vector<int64_t>(2, INT64_MAX - 1));
}

}  // namespace
