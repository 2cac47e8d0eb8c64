#include "tensor/jit_capture.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "ember/context.h"
#include "engine/graph_launch.h"
#include "engine/launch_sink.h"
#include "tensor/jit_memory_plan.h"
#include "tensor/jit_observer.h"
#include "tensor/jit_view.h"
#include "tensor/tensor_impl.h"

namespace ember::detail::jit {

using ir::Op;

void make_concrete(const Tensor& t) {
  TensorImpl* i = t.impl();
  if (i->node->op == Op::BUFFER) return;
  ember::realize({t});
  if (i->node->op == Op::BUFFER) return;
  Tensor c = detail::make_tensor_rg(ir::make_node(Op::CONTIGUOUS, i->node->dtype, {i->node}),
                                    i->requires_grad);
  ember::realize({c});
  i->node = c.impl()->node;
}

namespace {

const runtime::Storage* storage_of(const Tensor& t) {
  if (!t.defined() || t.impl()->node->op != Op::BUFFER) return nullptr;
  return engine::storage_of(*t.impl()->node).get();
}

// An input's buffer: its own, or the one under its view (the caller realized the inputs).
const StorageRef& input_storage(const Tensor& t) {
  const ir::Node* b = view_base(t.impl()->node.get());
  if (!b) throw Error("jit: internal error: an input is neither a buffer nor a view of one");
  return engine::storage_of(*b);
}

// For each entry, the first entry with the same (non-null) buffer; -1 for none.
std::vector<int> partition_of(const std::vector<const runtime::Storage*>& st) {
  std::vector<int> part(st.size(), -1);
  if (st.size() <= 32) {
    for (size_t i = 0; i < st.size(); i++)
      for (size_t j = 0; j <= i && st[i]; j++)
        if (st[j] == st[i]) {
          part[i] = static_cast<int>(j);
          break;
        }
    return part;
  }
  std::unordered_map<const runtime::Storage*, int> first;
  for (size_t i = 0; i < st.size(); i++)
    if (st[i]) part[i] = first.emplace(st[i], static_cast<int>(i)).first->second;
  return part;
}

// Whether the partition of st (partition_of) is `part`, without building it.
bool same_partition(const std::vector<const runtime::Storage*>& st, const std::vector<int>& part) {
  if (st.size() != part.size()) return false;
  if (st.size() > 32) return partition_of(st) == part;
  for (size_t i = 0; i < st.size(); i++) {
    int first = -1;
    for (size_t j = 0; j <= i && st[i] && first < 0; j++)
      if (st[j] == st[i]) first = static_cast<int>(j);
    if (first != part[i]) return false;
  }
  return true;
}

// Runs `write`, which overwrites the writers' buffers, with the value semantics of a realized
// in-place op: the writers move to a new version of their buffers and values that read the old
// data keep a copy (ember::overwrite_in_place). Fast path when nothing but the writers themselves
// reads the current data (the common case: no copy can be needed).
void write_versioned(const std::vector<Tensor>& writers, const std::function<void()>& write) {
  std::unordered_map<const ir::Node*, long> holders;  // distinct writer tensors per node
  std::vector<TensorImpl*> impls;
  for (auto& w : writers)
    if (std::find(impls.begin(), impls.end(), w.impl()) == impls.end()) {
      impls.push_back(w.impl());
      holders[w.impl()->node.get()]++;
    }
  std::vector<runtime::Storage*> storages;
  for (TensorImpl* i : impls) {
    runtime::Storage* st = engine::storage_of(*i->node).get();
    if (std::find(storages.begin(), storages.end(), st) != storages.end()) continue;
    storages.push_back(st);
    for (auto& n : st->live_nodes()) {
      if (engine::storage_of(*n).get() != st || ir::buffer_version(*n) != st->version()) continue;
      auto h = holders.find(n.get());
      if (h == holders.end() || n.use_count() > h->second + 1)
        return ember::overwrite_in_place(writers, write);
    }
  }
  for (runtime::Storage* st : storages) st->bump_version();
  for (TensorImpl* i : impls)
    i->node = engine::make_buffer(engine::storage_of(*i->node), i->node->shape);
  write();
}

// Clears the access observer on every exit.
struct ObserverGuard {
  ~ObserverGuard() { detail::access_observer() = nullptr; }
};

}  // namespace

std::vector<Tensor> Capture::record(const Jit::Fn& fn, const std::vector<Tensor>& inputs,
                                    const std::vector<bool>& views_in,
                                    const std::string& device_in) {
  device = device_in;
  views = views_in;
  // The inputs' buffers as the call starts (an in-place write during the call may give a view's
  // buffer node a private copy of the old data: the view still names the caller's buffer).
  std::vector<StorageRef> in_storage;
  for (size_t i = 0; i < inputs.size(); i++) {
    const Tensor& t = inputs[i];
    in_storage.push_back(input_storage(t));
    in_sig.push_back({t.dtype(), t.sizes()});
    input_impls.push_back(t.impl()->weak_from_this());
    view_keys.emplace_back();
    if (views[i]) view_key(t.impl()->node.get(), view_keys.back());
  }
  Binder binder{runtime::Storage::next_id(), {}, {}};
  Observer obs(*this, inputs, views);
  engine::LaunchLog rec;  // the launches the function runs
  rec.paused = &obs.paused;
  std::vector<Tensor> outs = run_recorded(fn, inputs, obs, rec);
  // A handle rebound away from a tensor read from outside from now on may be the closure's.
  for (auto& e : externals)
    if (auto t = e.impl.lock()) e.rebinds = t->rebinds;
  const std::vector<const runtime::Storage*> src_storage = note_sources(in_storage, obs);
  for (size_t i = 0; i < src_storage.size(); i++)
    if (src_storage[i]) binder.source_index.emplace(src_storage[i], static_cast<int>(i));
  bind_launches(rec, binder);
  check_writes(src_storage, inputs.size());
  specify_outputs(outs, inputs, obs, binder);
  obs.assigned.clear();
  obs.slot_before.clear();
  keep_held_buffers();
  planned = share_intermediates(launches, bindings);
  build_list();
  return outs;
}

std::vector<Tensor> Capture::run_recorded(const Jit::Fn& fn, const std::vector<Tensor>& inputs,
                                          Observer& obs, engine::LaunchLog& rec) {
  engine::RecordLaunches recording(rec);
  ObserverGuard guard;
  detail::access_observer() = &obs;
  std::vector<Tensor> outs = fn(inputs);
  // Everything the call left lazy is realized in the capture: outputs, in-place writes (to
  // inputs and to tensors outside the function) and new gradients.
  std::vector<Tensor> fin;  // (its strong references end with this function)
  for (size_t i = 0; i < outs.size(); i++) {
    if (!outs[i].defined())
      throw ValueError("jit: output " + std::to_string(i) + " is an undefined tensor");
    obs.read(outs[i]);  // a tensor from outside returned as it is is bound like one read
    fin.push_back(outs[i]);
  }
  fin.insert(fin.end(), obs.assigned.begin(), obs.assigned.end());
  std::vector<TensorImpl*> owners(slots.size());
  for (size_t r = 0; r < slots.size(); r++) {
    auto& g = slots[r];
    TensorImpl* o = g.input >= 0 ? inputs[g.input].impl() : g.owner.lock().get();
    owners[r] = o;
    if (o && o->grad.defined()) fin.push_back(o->grad);
  }
  detail::access_observer() = nullptr;
  realize(fin);
  fin.clear();
  obs.assigned.clear();
  return_values(outs, obs);
  for (size_t r = 0; r < slots.size(); r++)
    if (owners[r] && owners[r]->grad.defined()) make_concrete(owners[r]->grad);
  // A tensor the function made and kept outside itself (a closure variable, a member, a
  // container) would not be made again by a replay: the variable would keep this one.
  std::unordered_set<const TensorImpl*> known;
  for (auto& o : outs) known.insert(o.impl());
  for (TensorImpl* o : owners)
    if (o && o->grad.defined()) known.insert(o->grad.impl());
  for (auto& w : obs.made)
    if (auto t = w.lock(); t && !known.count(t.get()))
      throw Error(
          "jit: the function keeps a tensor it made outside itself (in a closure variable, a "
          "member or a container); a replay would not make it again, so the variable would "
          "keep a stale value: return it as an output instead");
  obs.made.clear();
  return outs;
}

void Capture::return_values(std::vector<Tensor>& outs, Observer& obs) {
  // An output that is a view of a buffer is returned as a copy (a view is a value), one per
  // tensor (a tensor returned twice stays one tensor). A detached buffer without a graph (a
  // loss.detach() after backward() realized the loss) is returned as that buffer.
  std::vector<Tensor> views;
  std::unordered_map<const TensorImpl*, Tensor> as_value;
  for (auto& o : outs) {
    const ir::NodeRef& n = o.impl()->node;
    if (n->op == Op::BUFFER || obs.input_of(o.impl()) >= 0) continue;  // an input: returned
    auto [it, first] = as_value.emplace(o.impl(), Tensor());
    if (first) {
      if (n->op == Op::DETACH && n->src[0]->op == Op::BUFFER && !engine::origin_of(*n->src[0]))
        it->second = detail::make_tensor_rg(n->src[0], false);
      else
        views.push_back(it->second = o.contiguous());
    }
    o = it->second;
  }
  realize(views);
}

std::vector<const runtime::Storage*> Capture::note_sources(
    const std::vector<StorageRef>& in_storage, Observer& obs) {
  // The inputs, then the external tensors.
  std::vector<const runtime::Storage*> src_storage;
  for (auto& st : in_storage) src_storage.push_back(st.get());
  for (auto& e : externals) {
    Tensor t = e.slot >= 0 ? obs.slot_before[e.slot] : Tensor(e.impl.lock());
    src_storage.push_back(storage_of(t));
  }
  partition = partition_of(src_storage);
  for (auto* st : src_storage)
    source_sig.push_back(st ? std::make_pair(st->dtype(), st->numel())
                            : std::make_pair(kFloat32, int64_t{-1}));
  return src_storage;
}

int Capture::bind(const StorageRef& st, Binder& binder) {
  auto it = binder.index.find(st.get());
  if (it != binder.index.end()) return it->second;
  Binding b;
  b.preexisting = st->id() < binder.first_new;
  if (auto s = binder.source_index.find(st.get()); s != binder.source_index.end()) {
    b.role = Role::Source;
    b.index = s->second;
  } else {
    b.rng_draws = detail::rng_draws(*st);
    b.role = b.rng_draws ? Role::RngKey : Role::Fixed;
    b.fixed = st;
  }
  int id = static_cast<int>(bindings.size());
  bindings.push_back(b);
  binder.index.emplace(st.get(), id);
  return id;
}

void Capture::bind_launches(engine::LaunchLog& rec, Binder& binder) {
  for (auto& l : rec.launches) {
    CapturedLaunch cl{l.program, {}};
    for (auto& b : l.buffers) cl.bindings.push_back(bind(b, binder));
    const size_t outputs = l.program ? l.program->kernel.num_outputs() : 1;
    for (size_t o = 0; o < outputs; o++) bindings[cl.bindings[o]].written = true;
    launches.push_back(std::move(cl));
  }
  rec.launches.clear();
}

void Capture::check_writes(const std::vector<const runtime::Storage*>& src_storage, size_t n_in) {
  // Sources that the function wrote: the tensors it wrote through, which a replay versions.
  std::vector<bool> writer(src_storage.size(), false);
  for (size_t i = 0; i < n_in; i++) writer[i] = input_written[i];
  for (size_t k = 0; k < externals.size(); k++) writer[n_in + k] = externals[k].written;
  for (auto& b : bindings) {
    if (!b.written) continue;
    bool ok = b.role != Role::Fixed || !b.preexisting;
    if (b.role == Role::Source) {
      ok = false;
      for (size_t i = 0; i < src_storage.size() && !ok; i++)
        ok = writer[i] && partition[i] == partition[b.index];
    }
    if (!ok)
      throw Error(
          "jit: the function writes in place into a buffer that existed before the call "
          "through a tensor made inside it, so a replay could not version it; write through "
          "the tensor itself (an input or a tensor outside the function)");
  }
}

void Capture::make_fresh(int b) {
  Binding& bd = bindings[b];
  if (bd.role == Role::Fixed && !bd.preexisting) {
    bd.role = Role::Fresh;
    bd.index = static_cast<int>(fresh.size());
    fresh.push_back({bd.fixed->dtype(), bd.fixed->numel()});
    fresh_place.push_back(bd.fixed->device());  // a replay's buffer where the capture's was
  }
}

OutSpec Capture::spec_of(const Tensor& t, Observer& obs,
                         const std::unordered_map<const TensorImpl*, int>& slot_after,
                         Binder& binder) {
  OutSpec s;
  s.dtype = t.dtype();
  s.shape = t.sizes();
  const TensorImpl* i = t.impl();
  if (int j = obs.input_of(i); j >= 0) {
    s.kind = OutSpec::Input;
    s.index = j;
  } else if (int k = obs.external_of(i); k >= 0) {
    s.kind = OutSpec::External;
    s.index = k;
  } else if (auto it = slot_after.find(i); it != slot_after.end()) {
    s.kind = OutSpec::SlotGrad;
    s.index = it->second;
  } else {
    if (i->serial < obs.start() || i->node->op != Op::BUFFER)
      throw Error(
          "jit: the function returned (or left as a gradient) a tensor made before "
          "the call that it never read; pass it as an input");
    s.kind = OutSpec::Buffer;
    s.index = bind(engine::storage_of(*i->node), binder);
    make_fresh(s.index);
  }
  return s;
}

void Capture::specify_outputs(const std::vector<Tensor>& outs_now,
                              const std::vector<Tensor>& inputs, Observer& obs, Binder& binder) {
  // What the function left: gradients, then outputs.
  std::unordered_map<const TensorImpl*, int> slot_after;
  for (size_t r = 0; r < slots.size(); r++) {
    auto& g = slots[r];
    TensorImpl* o = g.input >= 0 ? inputs[g.input].impl() : g.owner.lock().get();
    if (!o || !o->grad.defined()) {
      g.after.kind = OutSpec::Undefined;
    } else if (o->grad.impl() == g.before) {
      g.after.kind = OutSpec::Unchanged;
    } else {
      g.after = spec_of(o->grad, obs, slot_after, binder);
      slot_after.emplace(o->grad.impl(), static_cast<int>(r));
    }
  }
  for (size_t i = 0; i < outs_now.size(); i++) {
    OutSpec s;
    for (size_t k = 0; k < i && s.index < 0; k++)
      if (outs_now[k].is_same(outs_now[i])) {
        s.kind = OutSpec::SameAs;
        s.index = static_cast<int>(k);
      }
    outs.push_back(s.index >= 0 ? s : spec_of(outs_now[i], obs, slot_after, binder));
  }
}

void Capture::keep_held_buffers() {
  // Buffers made in the capture that something outside still holds (a value kept in a closure
  // variable, a copy preserved for a reader of old data): a replay must not overwrite them.
  for (size_t b = 0; b < bindings.size(); b++) {
    auto& bd = bindings[b];
    if (bd.role == Role::Fixed && !bd.preexisting && bd.written && bd.fixed.use_count() > 1)
      make_fresh(static_cast<int>(b));
    if (bd.role == Role::Fixed && bd.preexisting) check_alive.push_back(static_cast<int>(b));
  }
}

void Capture::build_list() {
  std::vector<int32_t> slot(bindings.size());
  list = engine::LaunchList{};
  list.graph_key = engine::new_graph_key();  // a replay may run as one device graph
  bound_binding.clear();
  for (size_t b = 0; b < bindings.size(); b++)
    if (bindings[b].role != Role::Fresh) {
      slot[b] = static_cast<int32_t>(bound_binding.size());
      bound_binding.push_back(static_cast<int>(b));
    }
  list.bound = static_cast<int32_t>(bound_binding.size());
  list.fresh = fresh;
  list.fresh_place = fresh_place;
  for (size_t b = 0; b < bindings.size(); b++)
    if (bindings[b].role == Role::Fresh) slot[b] = list.fresh_slot(bindings[b].index);
  for (const CapturedLaunch& l : launches) {
    engine::LaunchStep s{l.program, {}};
    for (int b : l.bindings) s.slots.push_back(slot[b]);
    list.steps.push_back(std::move(s));
  }
}

bool Capture::matches(const std::vector<Tensor>& inputs, const std::vector<bool>& views_now,
                      const std::string& device_now) {
  std::vector<Tensor>& sources = sources_;
  if (device_now != device) {
    mismatch = "the device (" + device + " -> " + device_now + ")";
    return false;
  }
  if (views_now != views) {
    mismatch = "whether an input is a view";
    return false;
  }
  for (size_t j = 0; j < inputs.size(); j++)
    if (views[j] && !same_view(inputs[j].impl()->node.get(), view_keys[j])) {
      mismatch = "the view of input " + std::to_string(j) + " (shape, strides or offset)";
      return false;
    }
  for (size_t j = 0; j < inputs.size(); j++)
    if (auto old = input_impls[j].lock(); old && old.get() != inputs[j].impl()) {
      mismatch = "input " + std::to_string(j) +
                 " (the tensor passed at capture is still alive and may be read by the function "
                 "through its closure)";
      return false;
    }
  sources = inputs;
  for (auto& e : externals) {
    if (e.slot < 0) {
      auto impl = e.impl.lock();
      if (!impl)
        throw Error(
            "jit: a tensor that the function read at capture was destroyed (was the variable "
            "holding it rebound to a new tensor, e.g. a parameter replaced?); the function "
            "would now read another tensor: call reset() to capture again, or pass it as an "
            "input");
      if (impl->rebinds != e.rebinds) {
        mismatch =
            "a variable that held a tensor the function read from outside was rebound (the "
            "function may now read another tensor)";
        return false;
      }
      sources.emplace_back(std::move(impl));
      continue;
    }
    const GradSlot& g = slots[e.slot];
    std::shared_ptr<TensorImpl> owner = g.input >= 0 ? nullptr : g.owner.lock();
    TensorImpl* o = g.input >= 0 ? inputs[g.input].impl() : owner.get();
    sources.push_back(o ? o->grad : Tensor());
  }
  for (auto& g : slots) {
    TensorImpl* o = g.input >= 0 ? inputs[g.input].impl() : g.owner.lock().get();
    if (!o)
      throw Error(
          "jit: a tensor whose gradient the function used at capture was destroyed (a "
          "parameter replaced?); call reset() to capture again");
    if (!g.read_first) continue;
    const TensorImpl* now = o->grad.impl();
    if ((now != nullptr) != g.before_defined ||
        (now && (now->node->dtype != g.dtype || now->node->shape != g.shape))) {
      mismatch = "the state of a gradient that the function accumulates into (defined, shape)";
      return false;
    }
  }
  std::vector<const runtime::Storage*>& st = bound_ptr_;
  bound_.resize(sources.size());
  st.resize(sources.size());
  for (size_t i = 0; i < sources.size(); i++) {
    if (i < inputs.size()) {
      bound_[i] = input_storage(sources[i]);  // a view input: the buffer it reads
    } else if (sources[i].defined()) {
      if (sources[i].impl()->node->op != Op::BUFFER) make_concrete(sources[i]);
      bound_[i] = engine::storage_of(*sources[i].impl()->node);
    } else {
      bound_[i] = nullptr;
    }
    st[i] = bound_[i].get();
    auto sig = st[i] ? std::make_pair(st[i]->dtype(), st[i]->numel())
                     : std::make_pair(kFloat32, int64_t{-1});
    if (sig != source_sig[i]) {
      mismatch = "the buffer of a tensor the function reads (dtype or size)";
      return false;
    }
  }
  if (!same_partition(st, partition)) {
    mismatch = "which inputs and tensors the function reads share one buffer (aliasing)";
    return false;
  }
  for (int b : check_alive)
    if (bindings[b].fixed.use_count() == 1)
      throw Error("jit: a buffer bound at capture (" +
                  std::string(dtype_name(bindings[b].fixed->dtype())) + "[" +
                  std::to_string(bindings[b].fixed->numel()) +
                  "]) was released by its owner (was a parameter replaced?); call reset() to "
                  "capture again");
  return true;
}

void Capture::release() {
  sources_.clear();
  bound_.clear();
  bound_ptr_.clear();
  fresh_store_.clear();
  slots_.clear();
}

std::vector<Tensor> Capture::replay(const std::vector<Tensor>& inputs) {
  const std::vector<Tensor>& sources = sources_;
  std::vector<StorageRef>& fresh_store = fresh_store_;
  for (auto& b : bindings)
    if (b.role == Role::RngKey)
      detail::next_rng_key(b.rng_draws, static_cast<int64_t*>(b.fixed->data()));
  slots_.resize(bound_binding.size());
  for (size_t i = 0; i < bound_binding.size(); i++) {
    const Binding& b = bindings[static_cast<size_t>(bound_binding[i])];
    // (a writer's buffer stays its own)
    slots_[i] = b.role == Role::Source ? &bound_[static_cast<size_t>(b.index)] : &b.fixed;
  }
  auto storage = [&](int bi) -> const StorageRef& {
    const Binding& b = bindings[bi];
    if (b.role == Role::Source) return bound_[b.index];
    if (b.role == Role::Fresh) return fresh_store[b.index];
    return b.fixed;
  };
  auto run = [&] { engine::run(list, slots_, fresh_store); };
  // The tensors the function wrote move to a new version of their buffers, and values read
  // from the old data keep a copy, as for a realized in-place op.
  std::vector<Tensor> writers;
  const size_t n_in = inputs.size();
  for (size_t i = 0; i < n_in; i++)
    if (input_written[i]) writers.push_back(inputs[i]);
  for (size_t k = 0; k < externals.size(); k++)
    if (externals[k].written) writers.push_back(sources[n_in + k]);
  if (writers.empty())
    run();
  else
    write_versioned(writers, run);

  auto make = [&](const OutSpec& s, const std::vector<Tensor>& done) -> Tensor {
    switch (s.kind) {
      case OutSpec::SameAs:
        return done[s.index];
      case OutSpec::Input:
        return inputs[s.index];
      case OutSpec::External:
        return sources[n_in + s.index];
      case OutSpec::SlotGrad: {
        const GradSlot& g = slots[s.index];
        TensorImpl* o = g.input >= 0 ? inputs[g.input].impl() : g.owner.lock().get();
        return o->grad;
      }
      case OutSpec::Buffer:
        return detail::make_tensor_rg(engine::make_buffer(storage(s.index), s.shape), false);
      default:
        return Tensor();
    }
  };
  std::vector<Tensor> none;
  for (auto& g : slots) {
    if (g.after.kind == OutSpec::Unchanged) continue;
    TensorImpl* o = g.input >= 0 ? inputs[g.input].impl() : g.owner.lock().get();
    o->grad = make(g.after, none);
  }
  std::vector<Tensor> result;
  for (auto& s : outs) result.push_back(make(s, result));
  return result;
}

}  // namespace ember::detail::jit
