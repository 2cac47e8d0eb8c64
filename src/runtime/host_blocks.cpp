#include "runtime/host_blocks.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace ember::runtime {

namespace {

// The rounded size of a request: whole cache lines, so that vector loads past a short tail stay
// inside the block.
size_t rounded(size_t bytes) { return bytes == 0 ? 64 : (bytes + 63) / 64 * 64; }

struct Cache {
  std::mutex mu;
  struct Block {
    size_t bytes;
    void* p;
  };
  std::vector<Block> blocks;  // oldest first
  size_t total = 0;
};

// Never destroyed: tensors that outlive static destruction may still return their blocks.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

// Small blocks: the last few freed by this thread, handed out again for a request of the same
// size without a lock. glibc serves a 64-byte aligned request through memalign, which costs about
// as much as the rest of a small eager call's allocations together; an eager call frees its
// intermediates and allocates the same sizes on its next run, on the same thread.
struct SmallCache {
  static constexpr int kSlots = 16;
  static constexpr size_t kMaxBytes = size_t{2} << 20;
  struct Block {
    size_t bytes = 0;
    void* p = nullptr;
  };
  Block blocks[kSlots];  // blocks[0, count), oldest first
  int count = 0;
  size_t total = 0;
  ~SmallCache();
};
// True once this thread's SmallCache is destroyed (thread exit): blocks then go to free().
thread_local bool t_small_gone = false;
thread_local SmallCache t_small;

SmallCache::~SmallCache() {
  for (int i = 0; i < count; i++) std::free(blocks[i].p);
  count = 0;
  total = 0;
  t_small_gone = true;
}

void* small_take(size_t n) {
  if (t_small_gone) return nullptr;
  SmallCache& c = t_small;
  for (int i = c.count; i-- > 0;)
    if (c.blocks[i].bytes == n) {
      void* p = c.blocks[i].p;
      for (int j = i; j + 1 < c.count; j++) c.blocks[j] = c.blocks[j + 1];
      c.count--;
      c.total -= n;
      return p;
    }
  return nullptr;
}

bool small_keep(void* p, size_t n) {
  if (t_small_gone || n > SmallCache::kMaxBytes) return false;
  SmallCache& c = t_small;
  while (c.count > 0 && (c.count == SmallCache::kSlots || c.total + n > SmallCache::kMaxBytes)) {
    std::free(c.blocks[0].p);  // the oldest goes
    c.total -= c.blocks[0].bytes;
    for (int j = 0; j + 1 < c.count; j++) c.blocks[j] = c.blocks[j + 1];
    c.count--;
  }
  c.blocks[c.count++] = {n, p};
  c.total += n;
  return true;
}

}  // namespace

void* host_alloc(size_t bytes) {
  const size_t n = rounded(bytes);
  if (n >= kMinCachedBytes) {
    Cache& c = cache();
    std::lock_guard<std::mutex> l(c.mu);
    // The most recently freed block of this size: its lines are the likeliest still cached.
    for (size_t i = c.blocks.size(); i-- > 0;)
      if (c.blocks[i].bytes == n) {
        void* p = c.blocks[i].p;
        c.blocks.erase(c.blocks.begin() + static_cast<std::ptrdiff_t>(i));
        c.total -= n;
        return p;
      }
  } else if (void* p = small_take(n)) {
    return p;
  }
  return std::aligned_alloc(64, n);
}

void host_free(void* p, size_t bytes) {
  if (!p) return;
  const size_t n = rounded(bytes);
  if (n < kMinCachedBytes) {
    if (!small_keep(p, n)) std::free(p);
    return;
  }
  if (n > kCacheCapBytes) return std::free(p);
  std::vector<void*> released;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> l(c.mu);
    c.blocks.push_back({n, p});
    c.total += n;
    size_t drop = 0;
    while (c.total > kCacheCapBytes) {
      c.total -= c.blocks[drop].bytes;
      released.push_back(c.blocks[drop++].p);
    }
    c.blocks.erase(c.blocks.begin(), c.blocks.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  for (void* q : released) std::free(q);
}

size_t host_cached_bytes() {
  Cache& c = cache();
  std::lock_guard<std::mutex> l(c.mu);
  return c.total;
}

void host_release_cached() {
  if (!t_small_gone) {
    SmallCache& s = t_small;
    for (int i = 0; i < s.count; i++) std::free(s.blocks[i].p);
    s.count = 0;
    s.total = 0;
  }
  std::vector<Cache::Block> blocks;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> l(c.mu);
    blocks.swap(c.blocks);
    c.total = 0;
  }
  for (auto& b : blocks) std::free(b.p);
}

}  // namespace ember::runtime
