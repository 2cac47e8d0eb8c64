// In-place writes outside a schedule (checkpoint loads, the optimizer's host-side writes of the
// learning rate) with the same value semantics as a realized in-place op: lazy values that read
// the current data keep a copy (engine/overwrite.h), `write` runs, and the tensors move to the new
// version of their buffers.
#include <algorithm>
#include <unordered_map>

#include "ember/jit.h"
#include "engine/launch_list.h"
#include "engine/overwrite.h"
#include "tensor/tensor_impl.h"

namespace ember {

void overwrite_in_place(const std::vector<Tensor>& ts, const std::function<void()>& write) {
  if (jit_capturing())
    throw Error(
        "jit: a host-side write (Optimizer::set_lr, ember::load) inside a jitted function would "
        "run only at capture, not on replays; do it outside the function");
  std::vector<engine::StorageRef> storages;
  std::unordered_map<const ir::Node*, long> owned;  // distinct tensors holding each node
  std::vector<std::pair<TensorImpl*, engine::StorageRef>> impls;
  for (auto& t : ts) {
    TensorImpl* impl = t.impl();
    if (!impl || impl->node->op != ir::Op::BUFFER || impl->assign_target)
      throw ValueError("overwrite_in_place: the tensor is not a realized buffer");
    if (std::any_of(impls.begin(), impls.end(), [&](auto& p) { return p.first == impl; })) continue;
    const engine::StorageRef& st = engine::storage_of(*impl->node);
    impls.push_back({impl, st});
    owned[impl->node.get()]++;
    if (std::find(storages.begin(), storages.end(), st) == storages.end()) storages.push_back(st);
  }
  std::vector<std::pair<ir::NodeRef, long>> handles;
  for (auto& t : ts)
    if (auto it = owned.find(t.impl()->node.get()); it != owned.end()) {
      handles.push_back({t.impl()->node, it->second + 1});
      owned.erase(it);
    }
  engine::sync();  // the host writes below come after every kernel held back
  engine::preserve_for_readers(storages, handles);
  handles.clear();
  // The old nodes may now read copies: move the tensors to the new version of their own storage
  // first, so that `write` (which goes through the tensors) fills the right memory.
  for (auto& s : storages) s->bump_version();
  for (auto& [impl, storage] : impls) impl->node = engine::make_buffer(storage, impl->node->shape);
  write();
}

}  // namespace ember
