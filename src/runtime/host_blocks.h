// Host memory for tensor buffers: 64-byte aligned blocks, with a cache of freed large blocks.
//
// A fresh large block costs first-touch page faults (the kernel zeroes every page on first write)
// each time glibc has to map or grow memory for it: ~1,250 faults for one 10000x128 float buffer,
// which an eager product or a training step allocates and frees again on every call. Freed blocks
// of at least kMinCachedBytes are kept (up to kCacheCapBytes in all, oldest released first) and
// handed out again for a request of the same rounded size, as a caching allocator does: their
// pages are already mapped. Smaller blocks are kept per thread, a few (16, at most 2 MiB) at a
// time: glibc's aligned allocation costs as much as the rest of a small eager call's allocations.
#pragma once
#include <cstddef>

namespace ember::runtime {

inline constexpr size_t kMinCachedBytes = size_t{256} << 10;
inline constexpr size_t kCacheCapBytes = size_t{512} << 20;

/// A 64-byte aligned block of at least `bytes` (rounded up to whole cache lines; bytes 0 gives
/// one line), uninitialised; nullptr when out of memory.
void* host_alloc(size_t bytes);
/// Returns a block from host_alloc(bytes) (the same `bytes`). nullptr is ignored.
void host_free(void* p, size_t bytes);
/// Bytes held in the cache of large blocks now (for tests).
size_t host_cached_bytes();
/// Releases every cached large block, and the calling thread's small ones, to the system.
void host_release_cached();

}  // namespace ember::runtime
