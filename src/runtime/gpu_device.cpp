#include "runtime/gpu_device.h"

namespace ember::runtime {

namespace {
constexpr size_t kCacheCapBytes = size_t{512} << 20;
}

void* BufferCache::take(size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = free_.find(rounded(bytes));
  if (it == free_.end() || it->second.empty()) return nullptr;
  void* h = it->second.back();
  it->second.pop_back();
  bytes_ -= rounded(bytes);
  return h;
}

bool BufferCache::keep(void* handle, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes_ + rounded(bytes) > kCacheCapBytes) return false;
  free_[rounded(bytes)].push_back(handle);
  bytes_ += rounded(bytes);
  return true;
}

std::vector<void*> BufferCache::drain() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<void*> out;
  for (auto& [size, hs] : free_) out.insert(out.end(), hs.begin(), hs.end());
  free_.clear();
  bytes_ = 0;
  return out;
}

size_t BufferCache::bytes() {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace ember::runtime
