// The dtypes that libtorch 1.13 (the parity reference) lacks or that need every bit pattern:
// uint16, uint32 and uint64 by hand (libtorch 2.x's rules: promotion only with themselves and the
// floating types, arithmetic modulo 2^bits, order as unsigned), and float16 / bfloat16 conversions
// over every 16-bit word and a sweep of float32 values, the cpu device against interp (whose
// rounding is written from IEEE 754's definition, not from kernel_scalar.h's bit arithmetic).
// int8, int16, float16 and bfloat16 arithmetic: tests/parity/parity_dtypes.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;

TEST(Dtypes, NamesSizesAndCategories) {
  EXPECT_EQ(kChar, kInt8);
  EXPECT_EQ(kShort, kInt16);
  EXPECT_EQ(kHalf, kFloat16);
  EXPECT_EQ(element_size(kInt8), 1u);
  EXPECT_EQ(element_size(kBFloat16), 2u);
  EXPECT_EQ(element_size(kUInt32), 4u);
  EXPECT_EQ(element_size(kUInt64), 8u);
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(kUInt16), "uint16");
  EXPECT_TRUE(is_floating_point(kFloat16) && is_floating_point(kBFloat16));
  EXPECT_TRUE(is_reduced_floating_point(kBFloat16) && !is_reduced_floating_point(kFloat32));
  EXPECT_TRUE(is_integral(kUInt64, false) && is_integral(kInt8, false));
  EXPECT_TRUE(is_unsigned(kUInt32) && !is_unsigned(kInt16));
}

// c10's promoteTypes (libtorch 2.x for uint16, uint32, uint64).
TEST(Dtypes, Promotion) {
  struct Case {
    ScalarType a, b, out;
  };
  for (const Case& c : {Case{kInt8, kUInt8, kInt16}, Case{kUInt8, kInt16, kInt16},
                        Case{kInt8, kInt64, kInt64}, Case{kBool, kInt8, kInt8},
                        Case{kInt64, kFloat16, kFloat16}, Case{kFloat16, kBFloat16, kFloat32},
                        Case{kBFloat16, kFloat64, kFloat64}, Case{kUInt32, kUInt32, kUInt32},
                        Case{kUInt64, kFloat16, kFloat16}, Case{kBFloat16, kUInt16, kBFloat16}}) {
    EXPECT_EQ(promote_types(c.a, c.b), c.out) << dtype_name(c.a) << " " << dtype_name(c.b);
  }
  for (auto [a, b] :
       {std::pair{kUInt32, kInt64}, std::pair{kUInt16, kUInt8}, std::pair{kBool, kUInt64}}) {
    EXPECT_THROW(promote_types(a, b), DTypeError) << dtype_name(a) << " " << dtype_name(b);
  }
  // Tensors: the same; a scalar of the same category keeps the tensor's type.
  const Tensor u = from_vector<uint32_t>({1, 2});
  EXPECT_EQ((u + 1).dtype(), kUInt32);
  EXPECT_EQ((u * 2.5).dtype(), kFloat32);
  EXPECT_EQ((u + ones({2}, kFloat16)).dtype(), kFloat16);
  EXPECT_THROW(u + from_vector<int32_t>({1, 2}), DTypeError);
}

TEST(Dtypes, UnsignedArithmeticWrapsAndOrdersAsUnsigned) {
  const uint64_t top = (uint64_t{1} << 63) + 5;  // above int64's range: negative as int64 bits
  for (const char* device : {"cpu", "interp"}) {
    SCOPED_TRACE(device);
    DeviceGuard g(device);
    const Tensor a = from_vector<uint64_t>({top, 7, 0, UINT64_MAX});
    const Tensor b = from_vector<uint64_t>({3, top, 1, 2});
    EXPECT_EQ((a + b).to_vector<uint64_t>(),
              (std::vector<uint64_t>{top + 3, top + 7, 1, 1}));  // modulo 2^64
    EXPECT_EQ((a - b).to_vector<uint64_t>(),
              (std::vector<uint64_t>{top - 3, 7 - top, UINT64_MAX, UINT64_MAX - 2}));
    EXPECT_EQ((a < b).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
    EXPECT_EQ(a.maximum(b).to_vector<uint64_t>(), (std::vector<uint64_t>{top, top, 1, UINT64_MAX}));
    EXPECT_EQ(a.amax({0}).item<uint64_t>(), UINT64_MAX);
    EXPECT_EQ(a.amin({0}).item<uint64_t>(), uint64_t{0});
    EXPECT_EQ(a.to(kFloat64).to_vector<double>()[0], 9223372036854775808.0);  // rounds to 2^63
    const Tensor h = from_vector<uint16_t>({65535, 300, 2});
    EXPECT_EQ((h * h).to_vector<uint16_t>(),
              (std::vector<uint16_t>{1, static_cast<uint16_t>(90000), 4}));
    EXPECT_EQ((h + 1).to_vector<uint16_t>(), (std::vector<uint16_t>{0, 301, 3}));
    EXPECT_EQ((-h).to_vector<uint16_t>(), (std::vector<uint16_t>{1, 65236, 65534}));
    EXPECT_EQ(h.to(kInt8).to_vector<int8_t>(), (std::vector<int8_t>{-1, 44, 2}));
    const Tensor w = from_vector<uint32_t>({4294967295u, 65536});
    EXPECT_EQ((w * w).to_vector<uint32_t>(), (std::vector<uint32_t>{1, 0}));
    EXPECT_EQ(w.sum().item<int64_t>(), 4295032831);  // integer sums are int64, as libtorch's
    EXPECT_EQ(w.to(kFloat32).to_vector<float>()[0], 4294967296.0f);
  }
}

// A product of float16 or bfloat16 matrices is the float32 product of their values, rounded once
// (multiples of 1/16: every product and partial sum is exact in float32).
TEST(Dtypes, ReducedFloatMatmulRoundsOnce) {
  std::vector<float> av, bv;
  for (int i = 0; i < 6 * 8; i++) av.push_back(static_cast<float>((i * 7) % 31 - 15) / 16);
  for (int i = 0; i < 8 * 3; i++) bv.push_back(static_cast<float>((i * 5) % 29 - 14) / 16);
  const Tensor a = from_vector(av).reshape({6, 8}), b = from_vector(bv).reshape({8, 3});
  for (const char* device : {"cpu", "interp"}) {
    DeviceGuard g(device);
    for (ScalarType t : {kFloat16, kBFloat16}) {
      const Tensor want = a.matmul(b).to(t);
      EXPECT_EQ(a.to(t).matmul(b.to(t)).to_vector<double>(), want.to_vector<double>())
          << device << " " << dtype_name(t);
      EXPECT_EQ(a.to(t).matmul(b.to(t)).dtype(), t);
    }
  }
}

// Every float16 and bfloat16 word converts to float32 and back to itself (NaNs to a quiet NaN),
// on cpu and on interp; float32 values round to the same words on both.
TEST(Dtypes, ReducedFloatConversionsAgreeAcrossDevices) {
  std::vector<uint16_t> words(65536);
  for (size_t i = 0; i < words.size(); i++) words[i] = static_cast<uint16_t>(i);
  // float32 values around every float16 and bfloat16 boundary: words between the 16-bit values
  // (ties and their neighbours) and beyond float16's range.
  std::vector<float> sweep;
  for (uint32_t u = 0; u < 0x80000000u; u += 0x1235u) {
    float f;
    std::memcpy(&f, &u, 4);
    sweep.push_back(f);
    sweep.push_back(-f);
  }
  for (uint32_t e = 0; e < 255; e++)
    for (uint32_t low : {0x1000u, 0x0fffu, 0x1001u, 0x3000u, 0x8000u, 0x7fffu, 0x18000u}) {
      const uint32_t u = (e << 23) | low;
      float f;
      std::memcpy(&f, &u, 4);
      sweep.push_back(f);
    }
  for (ScalarType t : {kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(t));
    std::vector<std::vector<float>> back;
    std::vector<std::vector<double>> rounded;
    for (const char* device : {"cpu", "interp"}) {
      DeviceGuard g(device);
      const Tensor w = from_blob(words.data(), {65536}, t);
      const Tensor f = w.to(kFloat32);
      back.push_back(f.to_vector<float>());
      // f -> t -> float32 gives back every non-NaN word's value; NaN stays NaN.
      const std::vector<float> again = f.to(t).to(kFloat32).to_vector<float>();
      for (size_t i = 0; i < again.size(); i++) {
        const float v = back.back()[i];
        if (std::isnan(v))
          EXPECT_TRUE(std::isnan(again[i])) << device << " word " << i;
        else
          EXPECT_EQ(std::memcmp(&again[i], &v, 4), 0) << device << " word " << i;
      }
      rounded.push_back(from_vector(sweep).to(t).to(kFloat64).to_vector<double>());
    }
    for (size_t i = 0; i < words.size(); i++) {
      if (!std::isnan(back[0][i])) {
        ASSERT_EQ(back[0][i], back[1][i]) << "word " << i;
      }
    }
    for (size_t i = 0; i < sweep.size(); i++) {
      const double c = rounded[0][i], r = rounded[1][i];
      ASSERT_TRUE((std::isnan(c) && std::isnan(r)) ||
                  (c == r && std::signbit(c) == std::signbit(r)))
          << "float32 " << sweep[i] << ": cpu " << c << ", interp " << r;
    }
  }
  // Spot values from the definitions: float16 1 = 0x3c00, 65504 = 0x7bff, 2^-24 = 0x0001.
  const Tensor h = from_vector<float>({1.0f, 65504.0f, 0x1p-24f, 65520.0f}).to(kFloat16);
  std::vector<uint16_t> hw(4);
  std::memcpy(hw.data(), h.contiguous().realize().data_ptr(), 8);
  EXPECT_EQ(hw, (std::vector<uint16_t>{0x3c00, 0x7bff, 0x0001, 0x7c00}));
}

}  // namespace
