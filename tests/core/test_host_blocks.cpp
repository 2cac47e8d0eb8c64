// The tensor buffers' host memory (runtime/host_blocks.h): freed large blocks come back for a
// request of the same size, small ones on the thread that freed them, other sizes do not, the cache
// stays within its cap, and a tensor's data survives being computed into a reused block.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "ember/ember.h"
#include "runtime/host_blocks.h"

namespace {

using namespace ember;
using runtime::host_alloc;
using runtime::host_free;

TEST(HostBlocks, AlignedAndWritableOverTheRoundedSize) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{100}, runtime::kMinCachedBytes + 1}) {
    auto* p = static_cast<unsigned char*>(host_alloc(n));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    std::memset(p, 0xab, (n + 63) / 64 * 64 + (n == 0 ? 64 : 0));
    host_free(p, n);
  }
}

TEST(HostBlocks, ReusesAFreedLargeBlockOfTheSameSize) {
  runtime::host_release_cached();
  const size_t n = size_t{5} << 20;
  void* a = host_alloc(n);
  host_free(a, n);
  EXPECT_EQ(runtime::host_cached_bytes(), n);
  void* other = host_alloc(n + 4096);  // another size: not the cached block
  EXPECT_NE(other, a);
  EXPECT_EQ(runtime::host_cached_bytes(), n);
  void* b = host_alloc(n - 10);  // the same size once rounded to cache lines
  EXPECT_EQ(b, a);
  EXPECT_EQ(runtime::host_cached_bytes(), 0u);
  host_free(b, n);
  host_free(other, n + 4096);
  runtime::host_release_cached();
  EXPECT_EQ(runtime::host_cached_bytes(), 0u);
}

TEST(HostBlocks, SmallBlocksComeBackOnTheirThreadOnly) {
  runtime::host_release_cached();
  void* a = host_alloc(1024);
  host_free(a, 1024);
  EXPECT_EQ(runtime::host_cached_bytes(), 0u);  // not in the cache of large blocks
  void* on_other = nullptr;
  std::thread([&] {
    on_other = host_alloc(1024);  // another thread's cache: empty
    std::memset(on_other, 1, 1024);
  }).join();
  EXPECT_NE(on_other, a);
  void* other_size = host_alloc(2048);
  EXPECT_NE(other_size, a);
  EXPECT_EQ(host_alloc(1000), a);  // 1000 rounds to the same 1024
  host_free(a, 1000);
  host_free(other_size, 2048);
  host_free(on_other, 1024);
  runtime::host_release_cached();
}

TEST(HostBlocks, SmallBlocksKeptAreBounded) {
  runtime::host_release_cached();
  std::vector<void*> ps;
  for (int i = 0; i < 40; i++) ps.push_back(host_alloc(4096));
  for (void* p : ps) host_free(p, 4096);
  std::vector<void*> again;
  for (int i = 0; i < 40; i++) again.push_back(host_alloc(4096));
  // The thread keeps the newest 16 and hands them out newest first (the rest went to free()).
  int reused_newest = 0;
  for (int i = 0; i < 16; i++) reused_newest += again[i] == ps[39 - i];
  EXPECT_EQ(reused_newest, 16);
  for (void* p : again) host_free(p, 4096);
  runtime::host_release_cached();
}

TEST(HostBlocks, CacheStaysWithinItsCapOldestReleasedFirst) {
  runtime::host_release_cached();
  const size_t n = runtime::kCacheCapBytes / 4 + 64;  // four of these exceed the cap
  std::vector<void*> ps;
  for (int i = 0; i < 4; i++) ps.push_back(host_alloc(n));
  for (void* p : ps) host_free(p, n);
  EXPECT_LE(runtime::host_cached_bytes(), runtime::kCacheCapBytes);
  EXPECT_EQ(runtime::host_cached_bytes(), 3 * ((n + 63) / 64 * 64));
  EXPECT_EQ(host_alloc(n), ps[3]);  // the newest is still there
  host_free(ps[3], n);
  runtime::host_release_cached();
}

TEST(HostBlocks, ProductIntoAReusedBufferIsRight) {
  // Each eager product frees the previous result's block and computes into it again: every
  // element must be this call's, not a stale one.
  const int64_t n = 1000, k = 64, m = 128;  // 512 KB outputs: cached
  std::vector<float> a(n * k), b(k * m);
  for (size_t i = 0; i < a.size(); i++) a[i] = static_cast<float>(i % 13) - 6;
  for (size_t i = 0; i < b.size(); i++) b[i] = static_cast<float>(i % 7) - 3;
  Tensor ta = from_blob(a.data(), {n, k}, kFloat32), tb = from_blob(b.data(), {k, m}, kFloat32);
  for (float s : {1.0f, 2.0f, -1.0f}) {
    Tensor c = (ta.matmul(tb) * s).realize();
    // A small product's block comes from this thread's small blocks after the first call.
    Tensor small = (ta.slice(0, 0, 4).matmul(tb) * s).realize();
    auto sv = small.to_vector<float>();
    for (int64_t i = 0; i < 4; i++)
      for (int64_t j = 0; j < m; j++) {
        float want = 0;
        for (int64_t q = 0; q < k; q++) want += a[i * k + q] * b[q * m + j];
        ASSERT_EQ(sv[i * m + j], want * s) << "small " << i << "," << j << " scale " << s;
      }
    auto v = c.to_vector<float>();
    for (int64_t i = 0; i < n; i += 97)
      for (int64_t j = 0; j < m; j += 13) {
        float want = 0;
        for (int64_t q = 0; q < k; q++) want += a[i * k + q] * b[q * m + j];
        ASSERT_EQ(v[i * m + j], want * s) << i << "," << j << " scale " << s;
      }
  }
}

}  // namespace
