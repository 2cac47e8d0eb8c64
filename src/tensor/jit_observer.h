// The capture call's observer (tensor/jit_capture.cpp): which tensors made before the call the
// jitted function reads and writes, and which gradient slots it touches.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/jit_capture.h"
#include "tensor/tensor_impl.h"

namespace ember::detail::jit {

// Installed as the access observer (tensor/tensor_impl.h) while the function runs.
class Observer final : public detail::AccessObserver {
 public:
  Observer(Capture& c, const std::vector<Tensor>& inputs, const std::vector<bool>& views)
      : c_(c), views_(views), start_(detail::next_tensor_serial()) {
    for (size_t i = 0; i < inputs.size(); i++)
      input_of_.emplace(inputs[i].impl(), static_cast<int>(i));
    c_.input_written.assign(inputs.size(), false);
  }
  bool paused = false;  // making an external value concrete: not part of the function
  std::vector<Tensor> assigned;
  std::vector<Tensor> slot_before;  // the gradients as they were before the call
  uint64_t start() const { return start_; }
  int input_of(const TensorImpl* i) const {
    auto it = input_of_.find(i);
    return it == input_of_.end() ? -1 : it->second;
  }
  int external_of(const TensorImpl* i) const {
    auto it = external_of_.find(i);
    return it == external_of_.end() ? -1 : it->second;
  }

  void read(const Tensor& t) override {
    const TensorImpl* i = t.impl();
    if (paused || i->serial >= start_ || input_of_.count(i)) return;
    note_external(t);
  }

  void assign(const Tensor& t) override {
    if (paused) return;
    const TensorImpl* i = t.impl();
    assigned.push_back(t);
    if (auto it = input_of_.find(i); it != input_of_.end()) {
      if (views_[it->second])
        throw Error("jit: the function writes in place into input " + std::to_string(it->second) +
                    ", which was passed as a view; in-place operations on views are not "
                    "supported (eager raises too): pass a realized tensor (x.contiguous())");
      c_.input_written[it->second] = true;
      return;
    }
    if (i->serial < start_) c_.externals[note_external(t)].written = true;
  }

  void grad_slot(TensorImpl& owner, bool write) override {
    if (paused || owner.serial >= start_ || slot_of_.count(&owner)) return;
    GradSlot g;
    if (auto it = input_of_.find(&owner); it != input_of_.end())
      g.input = it->second;
    else
      g.owner = owner.weak_from_this();
    g.read_first = !write;
    const TensorImpl* before = owner.grad.impl();  // no node_of: this must not count as a read
    g.before_defined = before != nullptr;
    if (before) {
      g.dtype = before->node->dtype;
      g.shape = before->node->shape;
      g.before = before;
      if (before->serial < start_) slot_grad_of_.emplace(before, static_cast<int>(c_.slots.size()));
    }
    slot_of_.emplace(&owner, static_cast<int>(c_.slots.size()));
    slot_before.push_back(owner.grad);
    c_.slots.push_back(std::move(g));
  }

  void host_data() override {
    if (paused) return;
    throw Error(
        "jit: from_blob / from_vector / tensor() inside a jitted function copy host data once, "
        "at capture, and replays would reuse it; create the tensor outside the function and "
        "pass it as an input");
  }
  void created(const std::shared_ptr<TensorImpl>& t) override {
    if (!paused) made.push_back(t);
  }
  std::vector<std::weak_ptr<TensorImpl>> made;  // the tensors the function made

  void reseed() override {
    throw Error(
        "jit: manual_seed inside a jitted function would run only at capture, not on replays; "
        "seed outside the function");
  }

 private:
  int note_external(const Tensor& t) {
    const TensorImpl* i = t.impl();
    if (auto it = external_of_.find(i); it != external_of_.end()) return it->second;
    External e;
    if (auto s = slot_grad_of_.find(i); s != slot_grad_of_.end())
      e.slot = s->second;
    else
      e.impl = t.impl()->weak_from_this();
    t.impl()->jit_read = true;
    int id = static_cast<int>(c_.externals.size());
    c_.externals.push_back(std::move(e));
    external_of_.emplace(i, id);
    // A lazy value made outside is a constant (later updates of what it was built from do not
    // change it): compute it now, outside the capture, and bind its buffer like any other.
    if (!i->assign_target && i->node->op != ir::Op::BUFFER) {
      paused = true;
      try {
        make_concrete(t);
      } catch (...) {
        paused = false;
        throw;
      }
      paused = false;
    }
    return id;
  }

  Capture& c_;
  const std::vector<bool>& views_;
  const uint64_t start_;
  std::unordered_map<const TensorImpl*, int> input_of_, external_of_, slot_of_, slot_grad_of_;
};

}  // namespace ember::detail::jit
