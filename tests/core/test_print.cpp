// Printing tensors (ember/tensor.h operator<<) against the text PyTorch prints for the same values:
// integers exact, one format per tensor, one row per line, and summaries beyond 1,000 elements.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;

std::string text(const Tensor& t) { return t.toString(); }

TEST(Print, IntegersAreExact) {
  EXPECT_EQ(text(full({}, int64_t{123456789012345}, kInt64)), "tensor(123456789012345)");
  EXPECT_EQ(text(from_vector(std::vector<int64_t>{123456789012345, 1})),
            "tensor([123456789012345,               1])");
  EXPECT_EQ(text(from_vector(std::vector<int64_t>{-9007199254740993, 3})),
            "tensor([-9007199254740993,                 3])");
  EXPECT_EQ(text(from_vector(std::vector<int32_t>{1, 2, 3, 4}, IntList{2, 2})),
            "tensor([[1, 2],\n        [3, 4]], dtype=int32)");
  EXPECT_EQ(text(from_vector(std::vector<uint8_t>{255, 0})), "tensor([255,   0], dtype=uint8)");
  EXPECT_EQ(text(from_vector(std::vector<bool>{true, false})), "tensor([ True, False])");
  EXPECT_EQ(text(from_vector(std::vector<uint64_t>{UINT64_MAX, 7})),
            "tensor([18446744073709551615,                    7], dtype=uint64)");
  EXPECT_EQ(text(from_vector(std::vector<int8_t>{-128, 5})), "tensor([-128,    5], dtype=int8)");
  EXPECT_EQ(text(from_vector(std::vector<float>{1.5f, -2.0f}).to(kFloat16)),
            "tensor([ 1.5000, -2.0000], dtype=float16)");
}

TEST(Print, FloatsShareOneFormat) {
  EXPECT_EQ(text(tensor({1.5f, 2.25f})), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(text(tensor({-1.5f, 2.0f})), "tensor([-1.5000,  2.0000])");
  EXPECT_EQ(text(tensor({1.0f, 2.0f})), "tensor([1., 2.])");
  EXPECT_EQ(text(tensor({1e-5f, 1.0f})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(text(tensor({1.0f, 2000.5f})), "tensor([1.0000e+00, 2.0005e+03])");
  EXPECT_EQ(text(from_vector(std::vector<double>{0.5})), "tensor([0.5000], dtype=float64)");
  EXPECT_EQ(text(full({}, 3.5)), "tensor(3.5000)");
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(text(tensor({std::nanf(""), inf, -inf, 1.5f})),
            "tensor([   nan,    inf,   -inf, 1.5000])");
}

TEST(Print, RowsAndBlocksOnTheirOwnLines) {
  Tensor t = arange(8, kInt64).reshape({2, 2, 2});
  EXPECT_EQ(text(t),
            "tensor([[[0, 1],\n"
            "         [2, 3]],\n"
            "\n"
            "        [[4, 5],\n"
            "         [6, 7]]])");
}

TEST(Print, EmptyAndGradientFlags) {
  EXPECT_EQ(text(zeros({0})), "tensor([])");
  EXPECT_EQ(text(zeros({0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(text(ones({2}, TensorOptions().requires_grad(true))),
            "tensor([1., 1.], requires_grad=True)");
  EXPECT_EQ(text(Tensor()), "[ Tensor (undefined) ]");
}

TEST(Print, SummarisesBeyondAThousandElements) {
  EXPECT_EQ(text(arange(2000, kInt64)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  const std::string m = text(arange(3000, kInt64).reshape({1000, 3}));
  EXPECT_EQ(m,
            "tensor([[   0,    1,    2],\n"
            "        [   3,    4,    5],\n"
            "        [   6,    7,    8],\n"
            "        ...,\n"
            "        [2991, 2992, 2993],\n"
            "        [2994, 2995, 2996],\n"
            "        [2997, 2998, 2999]])");
  EXPECT_LT(std::count(m.begin(), m.end(), '\n'), 8);
  // Every line of a long row fits 80 columns.
  std::istringstream lines(text(arange(100, kFloat32) / 7));
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
}

TEST(Print, ScalarTypesPrintTheirNames) {
  std::ostringstream o;
  o << kInt64 << " " << kFloat32 << " " << kBool;
  EXPECT_EQ(o.str(), "int64 float32 bool");
}

}  // namespace
