#include "ir/storage.h"

#include <cstdlib>
#include <new>
#include <string>

#include "ember/error.h"
#include "ir/host_blocks.h"
#include "ir/node.h"

namespace ember::ir {

namespace {
std::atomic<uint64_t> g_next_id{1};
std::atomic<void (*)()> g_before_data{nullptr};
}  // namespace

void Storage::set_before_data_hook(void (*hook)()) { g_before_data.store(hook); }

Storage::Storage(ScalarType dtype, int64_t numel)
    : id_(g_next_id++), dtype_(dtype), numel_(numel) {}

Storage::~Storage() { host_free(data_, nbytes()); }

uint64_t Storage::next_id() { return g_next_id.load(); }

void Storage::add_node(const Node* n) {
  std::lock_guard<std::mutex> l(nodes_mu_);
  nodes_.push_back(n);
}

void Storage::remove_node(const Node* n) {
  std::lock_guard<std::mutex> l(nodes_mu_);
  std::erase(nodes_, n);
}

std::vector<NodeRef> Storage::live_nodes() {
  std::lock_guard<std::mutex> l(nodes_mu_);
  std::vector<NodeRef> out;
  // A node in the list is whole (it leaves under this lock before being torn down), but may be
  // dying: try_acquire skips it.
  for (const Node* n : nodes_)
    if (NodeRef r = NodeRef::try_acquire(n)) out.push_back(std::move(r));
  return out;
}

void* Storage::data() {
  if (auto hook = g_before_data.load(std::memory_order_acquire)) hook();
  if (!data_) {
    // Whole cache lines (vector loads past a short tail stay inside the block); a freed block of
    // the same size is reused (host_blocks.h).
    data_ = host_alloc(nbytes());
    if (!data_)
      throw Error("ember: out of memory: cannot allocate a tensor buffer of " +
                  std::to_string(nbytes()) + " bytes (" +
                  std::to_string(static_cast<double>(nbytes()) / (1 << 30)) + " GiB)");
  }
  return data_;
}

}  // namespace ember::ir
