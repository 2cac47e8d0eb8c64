// ember::jit replays equal eager execution, or raise (issue 12): one test per way a replay could
// differ, with hand-computed right values. Each jitted function is called 5 times: call 1 runs
// eagerly, call 2 captures, calls 3-5 replay.
#include <gtest/gtest.h>

#include "ember/ember.h"

namespace {

using namespace ember;
using V = std::vector<float>;

std::vector<Tensor> one(const Tensor& t) { return {t}; }

template <typename F>
void expect_error(F&& f, const std::string& fragment) {
  try {
    f();
    FAIL() << "expected an Error containing \"" << fragment << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// Issue 12, input 1: x.add_(1) on an input, result x.sum().
TEST(JitSemantics, InPlaceUpdateOfAnInput) {
  Tensor x = zeros({4});
  x.realize();
  auto f = jit([](const std::vector<Tensor>& in) {
    Tensor x = in[0];
    x.add_(ones({4}));
    return one(x.sum());
  });
  for (int n = 1; n <= 5; n++) {
    EXPECT_EQ(f({x})[0].item<float>(), 4.0f * n) << "call " << n;
    EXPECT_EQ(x.to_vector<float>(), V(4, float(n))) << "call " << n;
  }
  EXPECT_EQ(f.replays(), 3);
  // Returning x itself: the caller gets its own tensor back, updated.
  Tensor y = zeros({4});
  y.realize();
  auto g = jit([](const std::vector<Tensor>& in) {
    Tensor y = in[0];
    y.add_(ones({4}));
    return one(y);
  });
  for (int n = 1; n <= 5; n++) {
    Tensor r = g({y})[0];
    EXPECT_TRUE(r.is_same(y)) << n;
    EXPECT_EQ(r.to_vector<float>(), V(4, float(n))) << n;
  }
}

// Issue 12, input 2: a jitted function calls another one.
TEST(JitSemantics, NestedJit) {
  auto inner = jit([](const std::vector<Tensor>& in) { return one(in[0] + 1); });
  auto outer = jit([&](const std::vector<Tensor>& in) { return one(inner({in[0]})[0] * 3); });
  for (int n = 1; n <= 5; n++)
    EXPECT_EQ(outer({full({2}, n)})[0].to_vector<float>(), V(2, 3.0f * (n + 1))) << n;
  EXPECT_EQ(outer.replays(), 3);
  // The inner one still works on its own afterwards.
  for (int n = 1; n <= 4; n++) EXPECT_EQ(inner({full({2}, n)})[0].to_vector<float>(), V(2, n + 1));
}

// Issue 12, input 3: a closure tensor updated with copy_ and no realize before each call.
TEST(JitSemantics, ClosureTensorUpdatedLazily) {
  for (bool realized : {false, true}) {
    Tensor s = zeros({1}).clone();  // lazy (a view such as zeros({1}) refuses copy_)
    if (realized) s.realize();
    auto f = jit([&](const std::vector<Tensor>& in) { return one(in[0] * s); });
    for (int n = 1; n <= 5; n++) {
      s.copy_(full({1}, n));
      EXPECT_EQ(f({full({1}, 10.0)})[0].item<float>(), 10.0f * n) << n << " " << realized;
    }
  }
}

// Issue 12, input 4: the same tensor passed as both arguments at capture.
TEST(JitSemantics, SameTensorAsTwoArguments) {
  auto f = jit([](const std::vector<Tensor>& in) { return one(in[0] + in[1] * 10); });
  Tensor x = ones({3});
  f({x, x});
  f({x, x});
  EXPECT_EQ(f({x, x})[0].to_vector<float>(), V(3, 11));
  EXPECT_EQ(f({full({3}, 1.0), full({3}, 2.0)})[0].to_vector<float>(), V(3, 21));
  EXPECT_EQ(f({x, x})[0].to_vector<float>(), V(3, 11));
  // In-place through one alias is seen through the other, as in eager.
  auto g = jit([](const std::vector<Tensor>& in) {
    Tensor a = in[0];
    a.mul_(2);
    return one(in[1] + 0);
  });
  Tensor z = ones({2});
  z.realize();
  for (int n = 1; n <= 5; n++) EXPECT_EQ(g({z, z})[0].to_vector<float>(), V(2, float(1 << n)));
}

TEST(JitSemantics, InPlaceWriteToAClosureTensor) {
  Tensor count = zeros({});
  count.realize();
  auto f = jit([&](const std::vector<Tensor>& in) {
    count.add_(ones({}));
    return one(in[0] * count);
  });
  for (int n = 1; n <= 5; n++) {
    EXPECT_EQ(f({full({2}, 2.0)})[0].to_vector<float>(), V(2, 2.0f * n)) << n;
    EXPECT_EQ(count.item<float>(), float(n));
  }
}

TEST(JitSemantics, ValueBuiltBeforeAReplayKeepsItsData) {
  Tensor w = ones({2});
  w.realize();
  auto f = jit([&](const std::vector<Tensor>& in) {
    w.add_(in[0]);
    return one(w.sum());
  });
  for (int n = 1; n <= 5; n++) {
    Tensor before = w * 1;  // lazy: reads w as it is now
    f({ones({2})});
    EXPECT_EQ(before.to_vector<float>(), V(2, float(n))) << n;
    EXPECT_EQ(w.to_vector<float>(), V(2, float(n + 1))) << n;
  }
}

TEST(JitSemantics, ClosureTensorRebound) {
  Tensor s = full({1}, 2.0);
  auto f = jit([&](const std::vector<Tensor>& in) { return one(in[0] * s); });
  for (int n = 1; n <= 3; n++) EXPECT_EQ(f({ones({1})})[0].item<float>(), 2.0f);
  s = full({1}, 5.0);  // the tensor the capture read is destroyed
  expect_error([&] { f({ones({1})}); }, "reset()");
  f.reset();
  for (int n = 1; n <= 3; n++) EXPECT_EQ(f({ones({1})})[0].item<float>(), 5.0f);
  // A lazy closure value is a constant: later in-place updates of what it was built from do not
  // change it.
  Tensor base = ones({1});
  base.realize();
  Tensor derived = base * 3;
  auto g = jit([&](const std::vector<Tensor>& in) { return one(in[0] + derived); });
  for (int n = 1; n <= 5; n++) {
    base.add_(ones({1}));
    base.realize();
    EXPECT_EQ(g({zeros({1})})[0].item<float>(), 3.0f) << n;
  }
}

TEST(JitSemantics, ClosureTensorReboundWhileAliveElsewhere) {
  // The variable the function reads is rebound, but the tensor it held lives on in `keep`: a
  // replay would silently read the old tensor. The rebinding is noted and the call captures
  // again, so every call equals eager.
  Tensor s = full({1}, 2.0);
  Tensor keep = s;
  auto f = jit([&](const std::vector<Tensor>& in) { return one(in[0] * s); });
  for (int n = 1; n <= 3; n++) EXPECT_EQ(f({ones({1})})[0].item<float>(), 2.0f);
  EXPECT_GT(f.replays(), 0);
  s = full({1}, 5.0);
  Tensor five = s;  // (a tensor the rebinding destroys raises instead: ClosureTensorRebound)
  for (int n = 1; n <= 4; n++) EXPECT_EQ(f({ones({1})})[0].item<float>(), 5.0f) << n;
  s = keep;  // back to the first tensor, by copy assignment this time
  for (int n = 1; n <= 4; n++) EXPECT_EQ(f({ones({1})})[0].item<float>(), 2.0f) << n;
  Tensor t = full({1}, 7.0);
  s = std::move(t);  // and by move assignment
  for (int n = 1; n <= 4; n++) EXPECT_EQ(f({ones({1})})[0].item<float>(), 7.0f) << n;
  // Replays resume once the binding is stable.
  const int64_t before = f.replays();
  for (int n = 1; n <= 3; n++) EXPECT_EQ(f({ones({1})})[0].item<float>(), 7.0f);
  EXPECT_GT(f.replays(), before);
}

TEST(JitSemantics, RepeatedAndPassThroughOutputs) {
  Tensor w = full({2}, 7.0);
  w.realize();
  auto f = jit([&](const std::vector<Tensor>& in) {
    Tensor y = in[0] * 2;
    return std::vector<Tensor>{y, y, in[0], w};
  });
  for (int n = 1; n <= 5; n++) {
    Tensor x = full({2}, n);
    x.realize();
    auto o = f({x});
    EXPECT_TRUE(o[0].is_same(o[1])) << n;
    EXPECT_TRUE(o[2].is_same(x)) << n;
    EXPECT_TRUE(o[3].is_same(w)) << n;
    EXPECT_EQ(o[1].to_vector<float>(), V(2, 2.0f * n));
  }
}

TEST(JitSemantics, GradientAccumulatesAcrossCallsWithoutZeroGrad) {
  Tensor w = ones({2});
  w.set_requires_grad(true);
  auto f = jit([&](const std::vector<Tensor>& in) {
    (w * in[0]).sum().backward();
    return one(w.grad() * 1);
  });
  for (int n = 1; n <= 5; n++) {
    EXPECT_EQ(f({full({2}, 3.0)})[0].to_vector<float>(), V(2, 3.0f * n)) << n;
    EXPECT_EQ(w.grad().to_vector<float>(), V(2, 3.0f * n)) << n;
  }
  // zero_grad outside between calls: eager starts again from zero, and so does the jit.
  w.set_grad(Tensor());
  EXPECT_EQ(f({full({2}, 3.0)})[0].to_vector<float>(), V(2, 3.0f));
  EXPECT_EQ(f({full({2}, 3.0)})[0].to_vector<float>(), V(2, 6.0f));
}

TEST(JitSemantics, GradientWithZeroGradInsideAndHeldGradsKeepTheirValues) {
  Tensor w = ones({2});
  w.set_requires_grad(true);
  optim::SGD opt({w}, optim::SGDOptions(0.5));
  auto f = jit([&](const std::vector<Tensor>& in) {
    opt.zero_grad();
    Tensor loss = (w * in[0]).sum();
    loss.backward();
    opt.step();
    return one(loss.detach());
  });
  std::vector<Tensor> grads;
  float wv = 1;
  for (int n = 1; n <= 5; n++) {
    Tensor x = full({2}, n);
    EXPECT_EQ(f({x})[0].item<float>(), 2 * wv * n) << n;
    wv -= 0.5f * n;
    EXPECT_EQ(w.to_vector<float>(), V(2, wv)) << n;
    grads.push_back(w.grad());
  }
  for (int n = 1; n <= 5; n++) EXPECT_EQ(grads[n - 1].to_vector<float>(), V(2, float(n))) << n;
}

TEST(JitSemantics, ShapeDtypeAndDeviceChanges) {
  auto f = jit([](const std::vector<Tensor>& in) { return one(in[0] + 1); });
  for (int n = 0; n < 3; n++) f({ones({2})});
  expect_error([&] { f({ones({3})}); }, "reset()");
  expect_error([&] { f({ones({2}, kFloat64)}); }, "captured as float32[2]");
  auto& ctx = Context::get();
  const std::string dev = ctx.device;
  ctx.device = "interp";
  EXPECT_EQ(f({ones({2})})[0].to_vector<float>(), V(2, 2));  // captured again, on interp
  EXPECT_EQ(f({ones({2})})[0].to_vector<float>(), V(2, 2));
  ctx.device = dev;
  EXPECT_EQ(f({ones({2})})[0].to_vector<float>(), V(2, 2));
}

// StaticData: sizes made on the host inside the function (as an ONNX Shape node makes them) and
// values computed only from them and constants may be read in a capture; replays with new input
// values give what eager gives. Data that depends on an input still cannot be read, and host
// data outside a StaticData scope is still refused.
TEST(JitSemantics, StaticDataMayBeReadInACapture) {
  auto f = jit([](const std::vector<Tensor>& in) {
    StaticData fixed;
    const Tensor& x = in[0];
    Tensor sizes = from_vector<int64_t>({x.size(0), x.size(1)});
    const auto v = (sizes * 2).to_vector<int64_t>();  // static: sizes and a constant
    return one(x.reshape({v[0] * v[1] / 4}) * (sizes.sum().item<int64_t>() + 0.5));
  });
  for (int n = 0; n < 4; n++) {
    Tensor x = full({2, 3}, double(n));
    EXPECT_EQ(f({x})[0].to_vector<float>(), V(6, float(n) * 5.5f)) << n;
  }
  EXPECT_EQ(f.replays(), 2);
  Tensor c = from_vector<float>({3.0f});
  mark_static(c);
  auto g = jit([&](const std::vector<Tensor>& in) { return one(in[0] * c.item<float>()); });
  for (int n = 0; n < 3; n++)
    EXPECT_EQ(g({full({2}, double(n))})[0].to_vector<float>(), V(2, 3.0f * n));
  EXPECT_EQ(g.replays(), 1);
  auto mixed = jit([](const std::vector<Tensor>& in) {
    StaticData fixed;
    Tensor sizes = from_vector<int64_t>({in[0].size(0)});
    return one(in[0] * (sizes.to(kFloat32) + in[0].sum()).item<float>());
  });
  mixed({ones({2})});
  expect_error([&] { mixed({ones({2})}); }, "reading tensor data");
  auto random = jit([](const std::vector<Tensor>& in) {
    StaticData fixed;
    return one(in[0] * rand({1}).item<float>());
  });
  random({ones({2})});
  expect_error([&] { random({ones({2})}); }, "reading tensor data");
}

TEST(JitSemantics, ReadsOfDataAndHostStateInsideTheCaptureRaise) {
  auto item =
      jit([](const std::vector<Tensor>& in) { return one(in[0] * in[0].sum().item<float>()); });
  item({ones({2})});
  expect_error([&] { item({ones({2})}); }, "reading tensor data");
  auto blob = jit([](const std::vector<Tensor>& in) { return one(in[0] + tensor({1, 2})); });
  blob({ones({2})});
  expect_error([&] { blob({ones({2})}); }, "host data");
  Tensor p = ones({1});
  p.set_requires_grad(true);
  optim::SGD opt({p}, optim::SGDOptions(0.1));
  auto lr = jit([&](const std::vector<Tensor>& in) {
    opt.set_lr(0.2);
    return one(in[0] + 1);
  });
  lr({ones({1})});
  expect_error([&] { lr({ones({1})}); }, "host-side write");
}

TEST(JitSemantics, InPlaceOnAViewInputRaisesAsEager) {
  Tensor m = ones({2, 2});
  m.realize();
  auto f = jit([](const std::vector<Tensor>& in) {
    Tensor v = in[0];
    v.add_(ones({2, 2}));
    return one(v.sum());
  });
  EXPECT_THROW(f({m.t()}), Error);  // eager: in-place on a view
  expect_error([&] { f({m.t()}); }, "passed as a view");
}

TEST(JitSemantics, TensorKeptOutsideTheFunctionRaises) {
  Tensor last;
  auto f = jit([&](const std::vector<Tensor>& in) {
    last = in[0] * 2;
    return one(in[0] + 1);
  });
  f({ones({2})});
  expect_error([&] { f({ones({2})}); }, "return it as an output instead");
}

// Found by the differential test: one value assigned to two tensors and realized in one
// schedule wrote only one of them (schedule.cpp keyed in-place targets by value).
TEST(JitSemantics, OneValueAssignedToTwoTensors) {
  for (bool use_jit : {false, true}) {
    Tensor c0 = full({4}, 1.0).clone(), c1 = from_vector(V{4, 0, -6, 0});
    realize({c0, c1});
    auto fn = [&](const std::vector<Tensor>& in) {
      c1.add_(c1 * in[0]);
      c0.copy_(c1 + 0);
      c1.copy_(c1 + 0);
      return std::vector<Tensor>{};
    };
    Jit j(fn);
    for (int n = 1; n <= 4; n++) {
      use_jit ? j({ones({4})}) : fn({ones({4})});
      realize({c0, c1});
      const float s = float(1 << n);
      EXPECT_EQ(c0.to_vector<float>(), V({4 * s, 0, -6 * s, 0})) << n << " " << use_jit;
      EXPECT_EQ(c1.to_vector<float>(), V({4 * s, 0, -6 * s, 0})) << n << " " << use_jit;
    }
  }
}

}  // namespace
