#include "ir/host_blocks.h"

#include <cstdlib>
#include <mutex>
#include <vector>

namespace ember::ir {

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
  }
  return std::aligned_alloc(64, n);
}

void host_free(void* p, size_t bytes) {
  if (!p) return;
  const size_t n = rounded(bytes);
  if (n < kMinCachedBytes || n > kCacheCapBytes) return std::free(p);
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
  std::vector<Cache::Block> blocks;
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> l(c.mu);
    blocks.swap(c.blocks);
    c.total = 0;
  }
  for (auto& b : blocks) std::free(b.p);
}

}  // namespace ember::ir
