// The float-to-integer rule of Tensor::to (ember/tensor.h), for every integer dtype, where C, and
// so libtorch, leave the result undefined (NaN, the infinities, values beyond the type's range):
// one answer on the cpu device (vectorised loops and their scalar tails, fused and alone), on
// interp, in constants folded at graph build, and in the host's conversions (item, to_vector). The
// reference below is written from the rule's words, not from ember's code. In-range values are
// checked against libtorch in tests/parity (CastRule.*).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ember/ember.h"
#include "ember/host_values.h"

namespace {

using namespace ember;

// The documented rule: truncate toward zero, NaN -> 0, saturate to [lo, hi].
template <typename T>
int64_t saturate(double x) {
  if (std::isnan(x)) return 0;
  const double lo = double(std::numeric_limits<T>::min()),
               hi = double(std::numeric_limits<T>::max());
  if (x <= lo) return std::numeric_limits<T>::min();
  if (x >= hi) return std::numeric_limits<T>::max();
  return static_cast<int64_t>(std::trunc(x));
}
// uint8, int8, int16, uint16, uint32: the int64 result, modulo 2^bits (its low bits, negative
// where a signed type's top bit is set).
int64_t wrapped(double x, ScalarType t) {
  const auto bits = static_cast<int>(8 * element_size(t));
  const uint64_t low = static_cast<uint64_t>(saturate<int64_t>(x)) & ((uint64_t{1} << bits) - 1);
  const bool negative = !is_unsigned(t) && (low >> (bits - 1)) != 0;
  return static_cast<int64_t>(low) - (negative ? int64_t{1} << bits : 0);
}
// uint64: truncated in [0, 2^64), the maximum above, negatives through int64 modulo 2^64 (its bits
// as an int64 here).
int64_t to_u64(double x) {
  if (x >= 18446744073709551616.0) return -1;
  if (x >= 9223372036854775808.0) return static_cast<int64_t>(static_cast<uint64_t>(x));
  return saturate<int64_t>(x);
}

int64_t expected(double x, ScalarType t) {
  switch (t) {
    case kInt64:
      return saturate<int64_t>(x);
    case kInt32:
      return saturate<int32_t>(x);
    case kUInt64:
      return to_u64(x);
    case kBool:
      return x != 0;  // NaN -> true
    default:
      return wrapped(x, t);
  }
}

const std::vector<double> kValues = {NAN,
                                     -NAN,
                                     INFINITY,
                                     -INFINITY,
                                     1e10,
                                     -1e10,
                                     3e9,
                                     -3e9,
                                     2147483647.5,
                                     -2147483648.5,
                                     2147483648.0,
                                     -2147483649.0,
                                     9.3e18,
                                     -9.3e18,
                                     9223372036854775807.0,
                                     -9223372036854775808.0,
                                     1e30,
                                     -1e30,
                                     1e300,
                                     -1.0,
                                     -200.5,
                                     300.7,
                                     255.9,
                                     256.0,
                                     -0.5,
                                     0.5,
                                     2.9,
                                     -2.9,
                                     0.0,
                                     -0.0};

const std::vector<ScalarType> kIntTypes = {kInt64, kInt32,  kUInt8,  kBool,  kInt8,
                                           kInt16, kUInt16, kUInt32, kUInt64};

std::vector<int64_t> want(const std::vector<double>& v, ScalarType src, ScalarType t) {
  std::vector<int64_t> out;
  for (double x : v) out.push_back(expected(src == kFloat32 ? double(float(x)) : x, t));
  return out;
}

// 3 copies of the values: the cpu loops run their vector body and their tail.
std::vector<double> repeated() {
  std::vector<double> v;
  for (int r = 0; r < 3; r++) v.insert(v.end(), kValues.begin(), kValues.end());
  return v;
}

TEST(CastRule, FloatToIntegerOnEveryDevice) {
  const std::vector<double> v = repeated();
  for (const char* device : {"cpu", "interp"}) {
    Context::get().device = device;
    for (ScalarType src : {kFloat32, kFloat64}) {
      const Tensor x = from_vector(v).to(src).contiguous();
      x.realize();
      for (ScalarType t : kIntTypes) {
        SCOPED_TRACE(std::string(device) + ": " + dtype_name(src) + " -> " + dtype_name(t));
        const std::vector<int64_t> w = want(v, src, t);
        EXPECT_EQ(x.to(t).to_vector<int64_t>(), w) << "a cast kernel";
        EXPECT_EQ((x * 1.0).to(t).to_vector<int64_t>(), w) << "a fused cast";
        EXPECT_EQ(x.to(t).sum({}, false, kInt64).item<int64_t>(), [&] {
          uint64_t s = 0;  // int64's sum wraps modulo 2^64
          for (int64_t k : w) s += static_cast<uint64_t>(k);
          return static_cast<int64_t>(s);
        }()) << "a cast inside a reduction";
      }
    }
  }
  Context::get().device = "cpu";
}

// Constants are folded at graph build (full({}, x).to(t) is one CONST): the same rule.
TEST(CastRule, FoldedConstantsAndHostConversions) {
  for (ScalarType src : {kFloat32, kFloat64}) {
    for (double x : kValues) {
      const double xs = src == kFloat32 ? double(float(x)) : x;
      for (ScalarType t : kIntTypes) {
        SCOPED_TRACE(std::to_string(x) + " " + dtype_name(src) + " -> " + dtype_name(t));
        // realized_clone fills a constant on the host: the folded value, without a kernel.
        EXPECT_EQ(realized_clone(full({}, xs, src).to(t)).item<int64_t>(), expected(xs, t));
      }
      // Reading a float tensor as an integer type on the host.
      const Tensor f = realized_clone(full({}, xs, src));
      EXPECT_EQ(f.item<int64_t>(), expected(xs, kInt64)) << x;
      EXPECT_EQ(int64_t(f.item<int32_t>()), expected(xs, kInt32)) << x;
      EXPECT_EQ(int64_t(f.item<uint8_t>()), expected(xs, kUInt8)) << x;
      EXPECT_EQ(int64_t(f.item<bool>()), expected(xs, kBool)) << x;
      EXPECT_EQ(int64_t(f.item<int8_t>()), expected(xs, kInt8)) << x;
      EXPECT_EQ(int64_t(f.item<int16_t>()), expected(xs, kInt16)) << x;
      EXPECT_EQ(int64_t(f.item<uint16_t>()), expected(xs, kUInt16)) << x;
      EXPECT_EQ(int64_t(f.item<uint32_t>()), expected(xs, kUInt32)) << x;
      EXPECT_EQ(static_cast<int64_t>(f.item<uint64_t>()), expected(xs, kUInt64)) << x;
    }
  }
  // A floating Scalar read as an integer.
  EXPECT_EQ(Scalar(NAN).to_int(), 0);
  EXPECT_EQ(Scalar(1e300).to_int(), INT64_MAX);
  EXPECT_EQ(Scalar(-INFINITY).to_int(), INT64_MIN);
  EXPECT_EQ(Scalar(-2.9).to_int(), -2);
}

}  // namespace
