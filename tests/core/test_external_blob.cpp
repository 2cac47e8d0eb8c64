// ember::from_blob with a deleter: a tensor over memory ember did not allocate (the Python
// package's zero-copy from_numpy / from_dlpack). Values are checked against loops over the same
// memory; the deleter's calls are counted. Under the dev preset, ASan checks that kernels stay
// inside the outside block (its size is exact and its start is not 64-byte aligned).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ember/ember.h"

namespace {

using namespace ember;

// An exact-size heap block of n floats starting 4 bytes past a 64-byte boundary, and a deleter
// that counts its calls and frees it.
struct Block {
  explicit Block(int64_t n) : raw(new float[static_cast<size_t>(n) + 1]), data(raw + 1) {}
  float* raw;
  float* data;
  int calls = 0;
  std::function<void(void*)> deleter() {
    return [this](void* p) {
      EXPECT_EQ(p, data);
      ++calls;
      delete[] raw;
    };
  }
};

TEST(ExternalBlob, SharesMemoryAndComputesOverIt) {
  const int64_t n = 1003;  // not a multiple of any vector width
  Block b(n);
  for (int64_t i = 0; i < n; i++) b.data[i] = 0.5f * static_cast<float>(i) - 7.0f;
  {
    Tensor t = from_blob(b.data, {17, 59}, kFloat32, b.deleter());
    EXPECT_TRUE(t.is_realized());
    EXPECT_EQ(t.data_ptr(), b.data);
    const std::vector<float> y = (t * 2.0 + 1.0).to_vector<float>();
    ASSERT_EQ(static_cast<int64_t>(y.size()), n);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) {
      EXPECT_EQ(y[i], b.data[i] * 2.0f + 1.0f) << i;
      sum += b.data[i];
    }
    EXPECT_NEAR(t.sum().item<double>(), sum, 1e-3);
    // A write to the memory is seen by results realized afterwards.
    b.data[5] = 100.0f;
    EXPECT_EQ((t + 0.0).to_vector<float>()[5], 100.0f);
    EXPECT_EQ(b.calls, 0);
  }
  EXPECT_EQ(b.calls, 1);
}

TEST(ExternalBlob, InPlaceOpsWriteThroughToTheMemory) {
  Block b(10);
  for (int i = 0; i < 10; i++) b.data[i] = static_cast<float>(i);
  {
    Tensor t = from_blob(b.data, {10}, kFloat32, b.deleter());
    const void* id = t.storage_id();
    t.mul_(3.0);
    t.realize();
    EXPECT_EQ(t.storage_id(), id);
    for (int i = 0; i < 10; i++) EXPECT_EQ(b.data[i], 3.0f * static_cast<float>(i));
  }
  EXPECT_EQ(b.calls, 1);
}

TEST(ExternalBlob, LazyResultsKeepTheMemoryAlive) {
  Block b(6);
  for (int i = 0; i < 6; i++) b.data[i] = static_cast<float>(i + 1);
  Tensor r;
  {
    Tensor t = from_blob(b.data, {2, 3}, kFloat32, b.deleter());
    r = t.exp().sum(IntList{1});  // lazy: reads t's buffer when realized
  }
  EXPECT_EQ(b.calls, 0);
  const std::vector<float> s = r.to_vector<float>();
  EXPECT_NEAR(s[0], std::exp(1.0) + std::exp(2.0) + std::exp(3.0), 1e-4);
  EXPECT_NEAR(s[1], std::exp(4.0) + std::exp(5.0) + std::exp(6.0), 1e-3);
  r = Tensor();
  EXPECT_EQ(b.calls, 1);
}

TEST(ExternalBlob, BadPointersRaiseAndTheDeleterStillRunsOnce) {
  int calls = 0;
  auto count = [&](void*) { ++calls; };
  alignas(8) unsigned char bytes[16] = {};
  EXPECT_THROW(from_blob(bytes + 1, {2}, kInt32, count), ValueError);
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(from_blob(nullptr, {2}, kFloat32, count), ValueError);
  EXPECT_EQ(calls, 2);
  EXPECT_THROW(from_blob(bytes, {-1}, kUInt8, count), ValueError);
  EXPECT_THROW(from_blob(bytes, {2}, kUInt8, std::function<void(void*)>()), ValueError);
  // An empty tensor is a copy: nothing to keep, the deleter runs at once.
  Tensor e = from_blob(bytes, {0, 3}, kUInt8, count);
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(calls, 3);
}

}  // namespace
