#include "runtime/host_blocks.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <sys/mman.h>

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

// Large blocks are pages mapped for them alone, so that freeing one gives its memory back to the
// system: glibc serves them from its heap once its dynamic mmap threshold has risen (it does after
// the first free of a mapped block), and memory freed inside the heap stays resident.
void* map_block(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
void unmap_block(void* p, size_t n) { munmap(p, n); }

// Live bytes (handed out, not yet freed), their peak since host_reset_peak, and their highest
// ever (which bounds the cache: host_blocks.h).
std::atomic<size_t> g_live{0}, g_peak{0}, g_high{0};

void raise_to(std::atomic<size_t>& v, size_t now) {
  size_t was = v.load(std::memory_order_relaxed);
  while (now > was && !v.compare_exchange_weak(was, now, std::memory_order_relaxed)) {
  }
}

// The cached bytes allowed beside `live` bytes in use: what keeps live + cached within the
// highest live bytes ever plus kCacheSlackBytes, and within the cap.
size_t allowance(size_t live) {
  const size_t high = std::max(g_high.load(std::memory_order_relaxed), live);
  return std::min(kCacheCapBytes, high + kCacheSlackBytes - live);
}

// Drops the oldest cached blocks until at most `keep` bytes stay (c.mu held); they go to `out`,
// freed by the caller outside the lock.
void trim(Cache& c, size_t keep, std::vector<Cache::Block>& out) {
  size_t drop = 0;
  while (c.total > keep) {
    c.total -= c.blocks[drop].bytes;
    out.push_back(c.blocks[drop++]);
  }
  c.blocks.erase(c.blocks.begin(), c.blocks.begin() + static_cast<std::ptrdiff_t>(drop));
}

void unmap_all(const std::vector<Cache::Block>& bs) {
  for (const Cache::Block& b : bs) unmap_block(b.p, b.bytes);
}

// A large block of n (rounded) bytes: the most recently freed one of that size (its lines are the
// likeliest still cached), else a new one, after cached blocks give way to it.
void* take_large(size_t n) {
  std::vector<Cache::Block> released;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> l(c.mu);
    for (size_t i = c.blocks.size(); i-- > 0;)
      if (c.blocks[i].bytes == n) {
        void* p = c.blocks[i].p;
        c.blocks.erase(c.blocks.begin() + static_cast<std::ptrdiff_t>(i));
        c.total -= n;
        return p;
      }
    trim(c, allowance(g_live.load(std::memory_order_relaxed) + n), released);
  }
  unmap_all(released);
  return map_block(n);
}

}  // namespace

void* host_alloc(size_t bytes) {
  const size_t n = rounded(bytes);
  void* p = nullptr;
  if (n >= kMinCachedBytes)
    p = take_large(n);
  else if (p = small_take(n); !p)
    p = std::aligned_alloc(64, n);
  if (!p) return nullptr;
  const size_t now = g_live.fetch_add(n, std::memory_order_relaxed) + n;
  raise_to(g_peak, now);
  raise_to(g_high, now);
  return p;
}

void host_free(void* p, size_t bytes) {
  if (!p) return;
  const size_t n = rounded(bytes);
  const size_t live = g_live.fetch_sub(n, std::memory_order_relaxed) - n;
  if (n < kMinCachedBytes) {
    if (!small_keep(p, n)) std::free(p);
    return;
  }
  if (n > kCacheCapBytes) return unmap_block(p, n);
  std::vector<Cache::Block> released;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> l(c.mu);
    c.blocks.push_back({n, p});
    c.total += n;
    trim(c, allowance(live), released);
  }
  unmap_all(released);
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
  unmap_all(blocks);
}

size_t host_live_bytes() { return g_live.load(std::memory_order_relaxed); }
size_t host_peak_bytes() { return g_peak.load(std::memory_order_relaxed); }
void host_reset_peak() { g_peak.store(host_live_bytes(), std::memory_order_relaxed); }

}  // namespace ember::runtime
