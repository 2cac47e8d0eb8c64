#include "runtime/storage.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#include "ember/error.h"
#include "ir/node.h"
#include "runtime/host_blocks.h"

namespace ember::runtime {

namespace {
std::atomic<uint64_t> g_next_id{1};
}  // namespace

Storage::Storage(ScalarType dtype, int64_t numel)
    : id_(g_next_id++), dtype_(dtype), numel_(numel) {}

Storage::Storage(ScalarType dtype, int64_t numel, void* data, std::shared_ptr<void> owner)
    : id_(g_next_id++), dtype_(dtype), numel_(numel), data_(data), owner_(std::move(owner)) {}

Storage::~Storage() {
  if (!owner_) host_free(data_, nbytes());
}

uint64_t Storage::next_id() { return g_next_id.load(); }

void Storage::add_node(const ir::Node* n) {
  std::lock_guard<support::SpinLock> l(nodes_mu_);
  if (!first_node_)
    first_node_ = n;
  else
    more_nodes_.push_back(n);
}

void Storage::remove_node(const ir::Node* n) {
  std::lock_guard<support::SpinLock> l(nodes_mu_);
  if (first_node_ != n) {
    std::erase(more_nodes_, n);
  } else if (more_nodes_.empty()) {
    first_node_ = nullptr;
  } else {  // the next reader moves up: the order of registration is kept
    first_node_ = more_nodes_.front();
    more_nodes_.erase(more_nodes_.begin());
  }
}

std::vector<ir::NodeRef> Storage::live_nodes() {
  std::vector<ir::NodeRef> out;
  std::lock_guard<support::SpinLock> l(nodes_mu_);
  if (!first_node_) return out;
  out.reserve(1 + more_nodes_.size());
  // A node in the list is whole (it leaves under this lock before being torn down), but may be
  // dying: try_acquire skips it.
  if (ir::NodeRef r = ir::NodeRef::try_acquire(first_node_)) out.push_back(std::move(r));
  for (const ir::Node* n : more_nodes_)
    if (ir::NodeRef r = ir::NodeRef::try_acquire(n)) out.push_back(std::move(r));
  return out;
}

void* Storage::data() {
  if (!data_) {
    // Whole cache lines (vector loads past a short tail stay inside the block); a freed block of
    // the same size is reused (host_blocks.h).
    data_ = host_alloc(nbytes());
    if (!data_)
      throw Error("out of memory: cannot allocate a tensor buffer of " + std::to_string(nbytes()) +
                  " bytes (" + std::to_string(static_cast<double>(nbytes()) / (1 << 30)) + " GiB)");
  }
  return data_;
}

}  // namespace ember::runtime
