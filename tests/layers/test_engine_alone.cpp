// The engine links and runs without the Tensor frontend above it: this program links
// ember_engine only (no ember_tensor) and realizes graph roots built from ir nodes. A call up into
// the frontend from the engine (an upward include or hook) would fail to link here.
#include <gtest/gtest.h>

#include <vector>

#include "ember/context.h"
#include "ember/error.h"
#include "engine/realize.h"
#include "ir/node.h"
#include "runtime/device.h"
#include "runtime/storage.h"

namespace ember {
namespace {

using ir::Op;

engine::StorageRef filled(const std::vector<float>& v) {
  auto s = std::make_shared<runtime::Storage>(kFloat32, static_cast<int64_t>(v.size()));
  auto* p = static_cast<float*>(s->data());
  for (size_t i = 0; i < v.size(); i++) p[i] = v[i];
  return s;
}

std::vector<float> read(const engine::StorageRef& s, size_t n) {
  auto* p = static_cast<const float*>(s->data());
  return std::vector<float>(p, p + n);
}

class EngineAlone : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    saved_ = Context::get().device;
    // The opencl device needs an OpenCL driver (PoCL in CI): without one it says why.
    try {
      runtime::get_device(GetParam());
    } catch (const ValueError& e) {
      GTEST_SKIP() << e.what();
    }
    Context::get().device = GetParam();
  }
  void TearDown() override { Context::get().device = saved_; }
  std::string saved_;
};

TEST_P(EngineAlone, RealizesRootsIntoNewBuffers) {
  auto a = engine::make_buffer(filled({1, 2, 3, 4}), {2, 2});
  auto b = engine::make_buffer(filled({10, 20, 30, 40}), {2, 2});
  auto sum = ir::make_node(Op::ADD, kFloat32, {a, b});
  auto prod = ir::make_node(Op::MUL, kFloat32, {sum, a});  // (a + b) * a
  auto out = engine::realize({{prod, nullptr}, {sum, nullptr}}, {});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(read(out[0], 4), (std::vector<float>{11, 44, 99, 176}));
  EXPECT_EQ(read(out[1], 4), (std::vector<float>{11, 22, 33, 44}));
  EXPECT_NE(out[0], engine::storage_of(*a));
  EXPECT_TRUE(engine::realize({}, {}).empty());
}

TEST_P(EngineAlone, InPlaceRootWritesItsTargetAndBumpsItsVersion) {
  auto storage = filled({1, 2, 3});
  auto a = engine::make_buffer(storage, {3});
  auto doubled = ir::make_node(Op::ADD, kFloat32, {a, a});
  const uint64_t before = storage->version();
  auto out = engine::realize({{doubled, storage}}, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], storage);  // the value is in the target, not in a new buffer
  EXPECT_EQ(storage->version(), before + 1);
  EXPECT_EQ(read(storage, 3), (std::vector<float>{2, 4, 6}));
}

INSTANTIATE_TEST_SUITE_P(Devices, EngineAlone, ::testing::Values("cpu", "interp", "opencl"));

}  // namespace
}  // namespace ember
