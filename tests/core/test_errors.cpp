// Expected errors: bad shapes, dims, dtypes and values raise the typed exceptions of
// include/ember/error.h, with messages that name the shapes / dims / dtypes involved. Errors are
// raised when the graph is built (eagerly), not later when a lazy value is realized.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <typeinfo>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

template <class E, class F>
void expect_error(F&& f, std::initializer_list<const char*> parts) {
  try {
    f();
  } catch (const E& e) {
    std::string m = e.what();
    for (const char* p : parts)
      EXPECT_NE(m.find(p), std::string::npos) << "message \"" << m << "\" lacks \"" << p << "\"";
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": "
                  << e.what();
    return;
  }
  ADD_FAILURE() << "expected " << typeid(E).name() << ", nothing was thrown";
}

// EXPECT_ERROR(ShapeError, a + b, "[2, 3]", "[4]"): `expr` throws E whose message contains every
// listed part.
#define EXPECT_ERROR(E, expr, ...)                         \
  do {                                                     \
    SCOPED_TRACE(#expr);                                   \
    expect_error<E>([&] { (void)(expr); }, {__VA_ARGS__}); \
  } while (0)

Tensor f32(IntList shape) { return zeros(shape); }
Tensor i64(IntList shape) { return zeros(shape, kInt64); }

}  // namespace

// ---- shapes that do not broadcast -----------------------------------------------------------
TEST(Errors, BroadcastMismatchNamesBothShapes) {
  EXPECT_ERROR(ShapeError, f32({2, 3}) + f32({4}), "[2, 3]", "[4]");
  EXPECT_ERROR(ShapeError, f32({2, 3}) * f32({3, 2}), "[2, 3]", "[3, 2]");
  EXPECT_ERROR(ShapeError, f32({5}) - 1 - f32({2, 4}), "[5]", "[2, 4]");
  EXPECT_ERROR(ShapeError, f32({3}) < f32({4}), "[3]", "[4]");
  EXPECT_ERROR(ShapeError, maximum(f32({2}), f32({3})), "[2]", "[3]");
  EXPECT_ERROR(ShapeError, f32({2}).pow(f32({3})), "[2]", "[3]");
  EXPECT_ERROR(ShapeError, zeros({2}, kBool).logical_and(zeros({3}, kBool)), "[2]", "[3]");
}

TEST(Errors, WhereMismatch) {
  EXPECT_ERROR(ShapeError, where(zeros({2, 3}, kBool), f32({4}), f32({2, 3})), "[2, 3]", "[4]");
  EXPECT_ERROR(ShapeError, where(zeros({5}, kBool), f32({3}), 1.0), "[5]", "[3]");
}

TEST(Errors, InPlaceResultMustFitTheTensor) {
  Tensor x = ones({3});
  x.realize();
  EXPECT_ERROR(ShapeError, x.add_(f32({2, 3})), "[2, 3]", "[3]");
  EXPECT_ERROR(ShapeError, x.copy_(f32({4})), "[4]", "[3]");
}

// ---- matmul -------------------------------------------------------------------------------------
TEST(Errors, MatmulInnerDims) {
  EXPECT_ERROR(ShapeError, f32({2, 3}).mm(f32({4, 5})), "2x3", "4x5");
  EXPECT_ERROR(ShapeError, matmul(f32({2, 3}), f32({4, 5})), "2x3", "4x5");
  EXPECT_ERROR(ShapeError, matmul(f32({7, 2, 3}), f32({2, 5})), "7x2x3", "2x5");
  EXPECT_ERROR(ShapeError, matmul(f32({3}), f32({4})), "[3]", "[4]");
  EXPECT_ERROR(ShapeError, matmul(f32({3}), f32({4, 2})), "3", "4x2");
  EXPECT_ERROR(ShapeError, matmul(f32({2, 3}), f32({4})), "2x3", "4");
}

TEST(Errors, MatmulRanksAndBatches) {
  EXPECT_ERROR(ShapeError, matmul(f32({}), f32({3})), "[]", "[3]");
  EXPECT_ERROR(ShapeError, f32({2, 3, 4}).mm(f32({4, 5})), "[2, 3, 4]", "[4, 5]");
  EXPECT_ERROR(ShapeError, bmm(f32({3, 4}), f32({3, 4, 5})), "[3, 4]", "[3, 4, 5]");
  EXPECT_ERROR(ShapeError, bmm(f32({2, 3, 4}), f32({3, 4, 5})), "2x3x4", "3x4x5");
  // Batch dims that do not broadcast: the message names both operands.
  EXPECT_ERROR(ShapeError, matmul(f32({2, 3, 4}), f32({3, 4, 5})), "[2, 3, 4]", "[3, 4, 5]");
}

// ---- cat / stack --------------------------------------------------------------------------------
TEST(Errors, CatShapes) {
  EXPECT_ERROR(ShapeError, cat({f32({2, 3}), f32({2, 4})}), "[2, 3]", "[2, 4]", "dimension 0");
  EXPECT_ERROR(ShapeError, cat({f32({2, 3}), f32({4, 2})}, 1), "[2, 3]", "[4, 2]", "dimension 1");
  EXPECT_ERROR(ShapeError, cat({f32({2, 3}), f32({3})}), "[2, 3]", "[3]");
  EXPECT_ERROR(ShapeError, cat({f32({}), f32({})}), "zero-dimensional");
  EXPECT_ERROR(ValueError, cat({}), "non-empty");
  EXPECT_ERROR(IndexError, cat({f32({2}), f32({2})}, 1), "[-1, 0]", "got 1");
  EXPECT_ERROR(ShapeError, stack({f32({2, 3}), f32({3, 2})}), "[2, 3]", "[3, 2]");
  EXPECT_ERROR(IndexError, stack({f32({2}), f32({2})}, 3), "[-2, 1]", "got 3");
}

// ---- reshape / view / expand ---------------------------------------------------------------
TEST(Errors, ReshapeCounts) {
  EXPECT_ERROR(ShapeError, f32({2, 3}).reshape({4}), "[4]", "size 6", "[2, 3]");
  EXPECT_ERROR(ShapeError, f32({2, 3}).view({5, -1}), "[5, -1]", "size 6");
  EXPECT_ERROR(ShapeError, f32({2, 3}).reshape({-1, -1}), "only one dimension");
  EXPECT_ERROR(ShapeError, f32({2, 3}).reshape({2, -3}), "-3");
  EXPECT_ERROR(ShapeError, f32({0, 3}).reshape({0, -1}), "[0, -1]", "size 0");
  EXPECT_ERROR(ShapeError, f32({4}).flatten().reshape({2, 3}), "[2, 3]", "size 4");
}

TEST(Errors, ExpandShapes) {
  EXPECT_ERROR(ShapeError, f32({3}).expand({4}), "[4]", "[3]", "(4)", "(3)");
  EXPECT_ERROR(ShapeError, f32({2, 3}).expand({3}), "(1)", "(2)");
  EXPECT_ERROR(ShapeError, f32({3}).expand({-1, 3}), "-1");
  EXPECT_ERROR(ShapeError, f32({2, 1}).expand_as(f32({3, 4})), "[3, 4]", "[2, 1]");
}

// ---- dims out of range ----------------------------------------------------------------------
TEST(Errors, ReductionDims) {
  EXPECT_ERROR(IndexError, f32({2, 3}).sum({2}), "[-2, 1]", "got 2");
  EXPECT_ERROR(IndexError, f32({2, 3}).mean({-3}), "[-2, 1]", "got -3");
  EXPECT_ERROR(IndexError, f32({2, 3}).sum({1, -1}), "dim 1", "multiple times");
  EXPECT_ERROR(IndexError, f32({2, 3}).amax({5}), "got 5");
  EXPECT_ERROR(IndexError, f32({2, 3}).argmax(2), "got 2");
  EXPECT_ERROR(IndexError, f32({2, 3}).max(-3), "got -3");
  EXPECT_ERROR(IndexError, f32({2, 3}).softmax(2), "got 2");
  EXPECT_ERROR(IndexError, f32({2, 3}).log_softmax(-3), "got -3");
  EXPECT_ERROR(IndexError, f32({2, 3}).prod(4), "got 4");
  EXPECT_ERROR(IndexError, f32({2, 3}).var({3}), "got 3");
  EXPECT_ERROR(IndexError, f32({}).sum({1}), "[-1, 0]", "got 1");
}

TEST(Errors, EmptyReductionWithoutIdentity) {
  EXPECT_ERROR(IndexError, f32({0, 3}).amax({0}), "[0, 3]");
  EXPECT_ERROR(IndexError, f32({0, 3}).max(), "[0, 3]");
  EXPECT_ERROR(IndexError, f32({2, 0}).argmax(1), "[2, 0]");
  EXPECT_ERROR(IndexError, std::get<0>(f32({0}).min(0)), "[0]");
}

TEST(Errors, MovementDims) {
  EXPECT_ERROR(IndexError, f32({2, 3}).permute({0}), "[0]", "2 dims");
  EXPECT_ERROR(IndexError, f32({2, 3}).permute({1, 1}), "repeated", "[1, 1]");
  EXPECT_ERROR(IndexError, f32({2, 3}).permute({0, 2}), "got 2");
  EXPECT_ERROR(IndexError, f32({2, 3}).transpose(0, 2), "got 2");
  EXPECT_ERROR(IndexError, f32({2, 3, 4}).t(), "3D");
  EXPECT_ERROR(IndexError, f32({2, 3}).squeeze(2), "got 2");
  EXPECT_ERROR(IndexError, f32({2, 3}).unsqueeze(3), "[-3, 2]", "got 3");
  EXPECT_ERROR(IndexError, f32({2, 3}).flatten(1, 0), "start_dim");
  EXPECT_ERROR(IndexError, f32({2, 3}).flip({0, -2}), "multiple times");
  EXPECT_ERROR(IndexError, f32({2, 3}).size(2), "got 2");
  EXPECT_ERROR(IndexError, f32({2, 3}).split(1, 2), "got 2");
}

TEST(Errors, UnfoldWindows) {
  EXPECT_ERROR(IndexError, unfold(f32({2, 9}), 2, 3, 1), "dim 2", "2 dims");
  EXPECT_ERROR(ValueError, unfold(f32({2, 9}), 1, 3, 0), "step", "got 0");
  EXPECT_ERROR(ValueError, unfold(f32({2, 9}), 1, 0, 1), "size must be positive", "got 0");
  EXPECT_ERROR(ShapeError, unfold(f32({2, 9}), 1, int64_t{1} << 62, 1, 4), "exceeds");
  EXPECT_ERROR(ValueError, unfold(f32({2, 9}), 1, 3, 1, 0), "dilation", "got 0");
  // A window of 3 with dilation 4 spans 9 elements: it fits 9, not 8.
  EXPECT_NO_THROW(unfold(f32({2, 9}), 1, 3, 2, 4));
  EXPECT_ERROR(ShapeError, unfold(f32({2, 8}), 1, 3, 2, 4), "dilation 4", "size 8");
  EXPECT_ERROR(ShapeError, unfold(f32({2, 8}), 1, 9, 1), "window of 9", "size 8");
  EXPECT_ERROR(ShapeError, unfold(f32({2, 0}), 1, 1, 1), "size 0");
}

TEST(Errors, IndexingOutOfRange) {
  EXPECT_ERROR(IndexError, f32({2, 3}).select(1, 3), "index 3", "[2, 3]", "dimension 1");
  EXPECT_ERROR(IndexError, f32({2, 3}).select(0, -3), "index -3", "[2, 3]");
  EXPECT_ERROR(IndexError, f32({2, 3}).narrow(1, 2, 2), "(2)", "(3)");
  EXPECT_ERROR(IndexError, f32({2, 3}).index({0, 1, 0}), "too many indices", "2");
  EXPECT_ERROR(IndexError, f32({}).select(0, 0), "0-dim");
  EXPECT_ERROR(IndexError, f32({}).slice(0, 0, 1), "0-dim");
}

TEST(Errors, Gather) {
  EXPECT_ERROR(DTypeError, f32({2, 3}).gather(1, zeros({2, 2}, kInt32)), "int64", "int32");
  EXPECT_ERROR(ShapeError, f32({2, 3}).gather(1, i64({2})), "[2]", "[2, 3]");
  EXPECT_ERROR(ShapeError, f32({2, 3}).gather(1, i64({3, 2})), "[3, 2]", "[2, 3]");
  EXPECT_ERROR(IndexError, f32({2, 3}).gather(2, i64({2, 3})), "got 2");
}

TEST(Errors, ItemNeedsOneElement) {
  EXPECT_ERROR(ShapeError, f32({2, 3}).item<float>(), "6 elements", "[2, 3]");
  EXPECT_ERROR(ShapeError, f32({0}).item<float>(), "0 elements", "[0]");
}

// ---- dtypes -------------------------------------------------------------------------------------
TEST(Errors, FloatingOnlyReductions) {
  EXPECT_ERROR(DTypeError, i64({3}).mean(), "mean", "floating", "int64");
  EXPECT_ERROR(DTypeError, zeros({3}, kInt32).mean({0}), "int32");
  EXPECT_ERROR(DTypeError, zeros({3}, kBool).mean(), "bool");
  EXPECT_ERROR(DTypeError, i64({3}).var(), "var", "floating", "int64");
  EXPECT_ERROR(DTypeError, zeros({3}, kInt32).std({0}), "int32");
}

TEST(Errors, LogicalOperatorsRequireBool) {
  EXPECT_ERROR(DTypeError, f32({2}) & zeros({2}, kBool), "&", "float32");
  EXPECT_ERROR(DTypeError, i64({2}) | i64({2}), "|", "int64");
  EXPECT_ERROR(DTypeError, zeros({2}, kBool) ^ f32({2}), "^", "float32");
  EXPECT_ERROR(DTypeError, ~i64({2}), "~", "int64");
}

TEST(Errors, BoolArithmetic) {
  EXPECT_ERROR(DTypeError, zeros({2}, kBool) - zeros({2}, kBool), "bool");
  EXPECT_ERROR(DTypeError, zeros({2}, kBool) - true, "bool");
  EXPECT_ERROR(DTypeError, -zeros({2}, kBool), "neg", "bool");
  EXPECT_ERROR(DTypeError, zeros({2}, kBool).relu(), "relu", "bool");
}

// In-place results that cannot be cast into the destination (PyTorch's canCast), alpha's rules,
// and scalars that must fit their dtype: the messages name the op and both dtypes or the value
// (tests/parity/parity_semantics.cpp holds the whole class against libtorch).
TEST(Errors, InPlaceResultTypeAlphaAndScalarFits) {
  EXPECT_ERROR(DTypeError, i64({3}).div_(i64({3})), "div_", "result type float32",
               "desired output type int64");
  Tensor x = i64({3});
  EXPECT_ERROR(DTypeError, x *= 2.5, "mul_", "float32", "int64");
  EXPECT_ERROR(DTypeError, zeros({2}, kBool).add_(1), "add_", "int64", "bool");
  EXPECT_ERROR(DTypeError, f32({2}).add(f32({2}), true), "add", "bool alpha");
  EXPECT_ERROR(DTypeError, i64({2}).sub(i64({2}), 0.5), "sub", "alpha", "int64");
  EXPECT_ERROR(ValueError, zeros({2}, kUInt8).add(zeros({2}, kUInt8), 300), "add", "300", "uint8");
  EXPECT_ERROR(DTypeError, f32({2}) - zeros({2}, kBool), "sub", "bool operand");
  EXPECT_ERROR(ValueError, full({2}, int64_t{1} << 40, kInt32), "full", "1099511627776", "int32");
  EXPECT_ERROR(ValueError, zeros({2}, kInt64).fill_(NAN), "fill_", "nan", "int64");
  EXPECT_ERROR(ValueError, zeros({2}, kInt32).clamp(0, int64_t{1} << 40), "int32");
}

TEST(Errors, RequiresGradNeedsFloatingPoint) {
  EXPECT_ERROR(DTypeError, i64({2}).requires_grad_(), "floating point", "int64");
  EXPECT_ERROR(DTypeError, zeros({2}, kBool).set_requires_grad(true), "bool");
  EXPECT_ERROR(DTypeError, ones({2}, TensorOptions().dtype(kInt32).requires_grad(true)), "int32");
  EXPECT_ERROR(DTypeError, arange(3, TensorOptions().requires_grad(true)), "int64");
  EXPECT_NO_THROW(i64({2}).requires_grad_(false));
  EXPECT_NO_THROW(f32({2}).requires_grad_());
}

TEST(Errors, RandomDtypes) {
  EXPECT_ERROR(DTypeError, rand({2}, kInt64), "rand", "int64");
  EXPECT_ERROR(DTypeError, randn({2}, kBool), "bool");
}

// ---- values -----------------------------------------------------------------------------------
TEST(Errors, BadArgumentValues) {
  EXPECT_ERROR(ValueError, f32({2}).clamp(std::nullopt, std::nullopt), "clamp");
  EXPECT_ERROR(ValueError, arange(0, 5, 0), "step");
  EXPECT_ERROR(ValueError, arange(5, 0, 1), "step");
  EXPECT_ERROR(ValueError, zeros({2, -1}), "-1", "[2, -1]");
  EXPECT_ERROR(ValueError, full({-3}, 1.0), "[-3]");
  EXPECT_ERROR(ValueError, eye(-2), "-2");
  EXPECT_ERROR(ValueError, f32({4}).split(0), "split_size", "0");
  EXPECT_ERROR(ValueError, f32({4}).chunk(0), "chunks", "0");
  EXPECT_ERROR(ValueError, f32({4}).slice(0, 0, 4, 0), "step", "0");
  EXPECT_ERROR(ValueError, f32({4}).slice(0, 0, 4, -1), "step", "-1");
  EXPECT_ERROR(ValueError, pad(f32({2, 3}), {1}), "padding length 1");
  EXPECT_ERROR(ValueError, pad(f32({3}), {1, 1, 1, 1}), "padding length 4", "1");
  EXPECT_ERROR(ValueError, pad(f32({3}), {-2, -2}), "dim 0");
  EXPECT_ERROR(ValueError, randint(3, 3, {2}), "low=3", "high=3");
  EXPECT_ERROR(ShapeError, from_vector(std::vector<float>{1, 2, 3}, IntList{2, 2}), "3 values",
               "[2, 2]");
}

TEST(Errors, UndefinedTensor) {
  Tensor u;
  EXPECT_ERROR(ValueError, u + f32({2}), "undefined");
  EXPECT_ERROR(ValueError, u.sum(), "undefined");
}

// ---- the hierarchy ----------------------------------------------------------------------------
TEST(Errors, TypedErrorsDeriveFromError) {
  EXPECT_THROW(f32({2}) + f32({3}), Error);
  EXPECT_THROW(f32({2}).sum({3}), Error);
  EXPECT_THROW(i64({2}).mean(), std::runtime_error);
  EXPECT_THROW(f32({2}).split(0), Error);
}

TEST(Errors, ValidCallsDoNotThrow) {
  // Neighbours of the error cases above that are legal.
  EXPECT_NO_THROW(f32({2, 3}) + f32({3}));
  EXPECT_NO_THROW(f32({2, 3}).reshape({3, -1}));
  EXPECT_NO_THROW(f32({}).sum({0}));
  EXPECT_NO_THROW(f32({2, 3}).unsqueeze(-3));
  EXPECT_NO_THROW(f32({0, 3}).sum({0}));
  EXPECT_NO_THROW(f32({0, 3}).prod(0));
  EXPECT_NO_THROW(cat({f32({2, 3}), f32({0, 3})}));
  EXPECT_NO_THROW(matmul(f32({2, 1, 3, 4}), f32({5, 4, 2})));
  EXPECT_NO_THROW(pad(f32({3}), {-1, -2}));
}

// A DeviceGuard restores the device when its scope ends, also when an error leaves the scope,
// and nested guards unwind in order.
TEST(DeviceGuard, RestoresTheDeviceAlsoOnAnException) {
  const std::string before = Context::get().device;
  {
    DeviceGuard outer("interp");
    EXPECT_EQ(Context::get().device, "interp");
    try {
      DeviceGuard inner("cpu");
      EXPECT_EQ(Context::get().device, "cpu");
      (void)ones({2}).matmul(ones({3}));  // a ShapeError leaves the inner scope
      FAIL() << "the product of mismatched vectors did not throw";
    } catch (const ShapeError&) {
    }
    EXPECT_EQ(Context::get().device, "interp");
  }
  EXPECT_EQ(Context::get().device, before);
}
