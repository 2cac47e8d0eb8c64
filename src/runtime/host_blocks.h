// Host memory for tensor buffers: 64-byte aligned blocks, with a cache of freed large blocks.
//
// A fresh large block costs first-touch page faults (the kernel zeroes every page on first write)
// each time glibc has to map or grow memory for it: ~1,250 faults for one 10000x128 float buffer,
// which an eager product or a training step allocates and frees again on every call. Freed blocks
// of at least kMinCachedBytes are kept (up to kCacheCapBytes in all, oldest released first) and
// handed out again for a request of the same rounded size, as a caching allocator does: their
// pages are already mapped. Smaller blocks are kept per thread, a few (16, at most 2 MiB) at a
// time: glibc's aligned allocation costs as much as the rest of a small eager call's allocations.
//
// The cache holds memory the process has mapped: live + cached bytes are what it keeps resident.
// So the cache keeps live + cached within the highest live bytes so far plus kCacheSlackBytes
// (a new block or a freed one makes the oldest cached blocks go): a network's intermediates of
// many sizes, freed as its graph runs, would otherwise stay beside the next ones (issue 42: 522 MB
// cached at ResNet-18 batch 8 beside 246 MB live at most). A loop that frees and allocates the
// same sizes stays within its peak and keeps its hits.
#pragma once
#include <cstddef>

namespace ember::runtime {

inline constexpr size_t kMinCachedBytes = size_t{256} << 10;
inline constexpr size_t kCacheCapBytes = size_t{512} << 20;
inline constexpr size_t kCacheSlackBytes = size_t{32} << 20;

/// A 64-byte aligned block of at least `bytes` (rounded up to whole cache lines; bytes 0 gives
/// one line), uninitialised; nullptr when out of memory.
void* host_alloc(size_t bytes);
/// Returns a block from host_alloc(bytes) (the same `bytes`). nullptr is ignored.
void host_free(void* p, size_t bytes);
/// Bytes held in the cache of large blocks now (for tests).
size_t host_cached_bytes();
/// Releases every cached large block, and the calling thread's small ones, to the system.
void host_release_cached();
/// Bytes of the blocks host_alloc handed out and host_free has not taken back (rounded sizes; the
/// caches not counted), now and at their highest since the last host_reset_peak(): what a
/// computation keeps alive, for tests and memory reports (issue 42).
size_t host_live_bytes();
size_t host_peak_bytes();
/// Starts a new peak at the bytes live now.
void host_reset_peak();

}  // namespace ember::runtime
