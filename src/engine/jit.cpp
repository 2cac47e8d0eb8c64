// Capture and replay (see include/ember/jit.h for the contract).
#include "ember/jit.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>

#include "ember/context.h"
#include "engine/realize.h"
#include "tensor/tensor_impl.h"

namespace ember {

namespace {

using StorageRef = std::shared_ptr<ir::Storage>;

enum class Role : uint8_t { Input, Output, Persistent, Intermediate, RngKey };

struct Binding {
  Role role;
  int index = -1;    // input or output position
  StorageRef fixed;  // Persistent / Intermediate / RngKey: the buffer used on every replay
};

struct CapturedLaunch {
  std::shared_ptr<runtime::Program> program;  // null: copy buffers[1] -> buffers[0]
  std::vector<int> bindings;                  // index into State::bindings per buffer slot
};

std::string signature(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + ir::shape_str(t.sizes());
}

}  // namespace

struct Jit::State {
  Fn fn;
  int64_t calls = 0, replays = 0, planned = 0;
  bool captured = false;
  std::vector<std::pair<ScalarType, Shape>> in_sig;
  std::vector<Binding> bindings;
  std::vector<CapturedLaunch> launches;
  std::vector<std::pair<ScalarType, Shape>> out_sig;
  std::vector<int> out_binding;  // binding index of each output
  std::vector<int> persistent;   // binding indices to check for liveness
};

Jit::Jit(Fn fn) : s_(std::make_unique<State>()) { s_->fn = std::move(fn); }
Jit::~Jit() = default;
Jit::Jit(Jit&&) noexcept = default;
Jit& Jit::operator=(Jit&&) noexcept = default;

void Jit::reset() {
  auto fn = std::move(s_->fn);
  s_ = std::make_unique<State>();
  s_->fn = std::move(fn);
}
int64_t Jit::calls() const { return s_->calls; }
int64_t Jit::replays() const { return s_->replays; }
int64_t Jit::captured_launches() const { return static_cast<int64_t>(s_->launches.size()); }
int64_t Jit::planned_bytes() const { return s_->planned; }

namespace {

// Inputs as realized contiguous buffers.
std::vector<Tensor> materialise(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  for (auto& t : inputs) {
    if (!t.defined()) throw ValueError("jit: undefined input tensor");
    Tensor c = t.node()->op == ir::Op::BUFFER ? t : t.contiguous();
    out.push_back(c);
  }
  realize(out);
  return out;
}

}  // namespace

std::vector<Tensor> Jit::operator()(const std::vector<Tensor>& raw_inputs) {
  State& s = *s_;
  s.calls++;
  const Context& ctx = Context::get();
  if (s.calls == 1) {  // warm-up: compile, create lazily initialised state
    auto outs = s.fn(raw_inputs);
    realize(outs);
    return outs;
  }
  std::vector<Tensor> inputs = materialise(raw_inputs);
  if (!s.captured) {
    // ---- capture -------------------------------------------------------------------------------
    uint64_t first_new = ir::Storage::next_id();
    std::vector<engine::Launch> rec;
    engine::set_launch_hook([&](const engine::Launch& l) { rec.push_back(l); });
    std::vector<Tensor> outs;
    try {
      outs = s.fn(inputs);
      for (auto& o : outs)
        if (o.node()->op != ir::Op::BUFFER) o = o.contiguous();
      realize(outs);
    } catch (...) {
      engine::set_launch_hook(nullptr);
      throw;
    }
    engine::set_launch_hook(nullptr);
    for (auto& t : inputs) s.in_sig.push_back({t.dtype(), t.sizes()});
    std::unordered_map<const ir::Storage*, int> index;
    std::unordered_map<const ir::Storage*, bool> written;
    for (auto& l : rec) written[l.buffers[0].get()] = true;
    auto bind = [&](const StorageRef& st) {
      auto it = index.find(st.get());
      if (it != index.end()) return it->second;
      Binding b;
      b.fixed = st;
      for (size_t i = 0; i < inputs.size(); i++)
        if (inputs[i].node()->storage == st) {
          b.role = Role::Input;
          b.index = static_cast<int>(i);
          b.fixed.reset();
        }
      if (b.fixed) {
        if (st->is_rng_key)
          b.role = Role::RngKey;
        else if (st->id() < first_new || !written.count(st.get()))
          b.role = Role::Persistent;
        else
          b.role = Role::Intermediate;
      }
      int id = static_cast<int>(s.bindings.size());
      s.bindings.push_back(b);
      index[st.get()] = id;
      return id;
    };
    for (auto& l : rec) {
      CapturedLaunch cl{l.program, {}};
      for (auto& b : l.buffers) cl.bindings.push_back(bind(b));
      s.launches.push_back(std::move(cl));
    }
    for (size_t i = 0; i < outs.size(); i++) {
      int b = bind(outs[i].node()->storage);
      if (s.bindings[b].role == Role::Intermediate) {
        s.bindings[b].role = Role::Output;
        s.bindings[b].index = static_cast<int>(i);
        s.bindings[b].fixed.reset();
      }
      s.out_sig.push_back({outs[i].dtype(), outs[i].sizes()});
      s.out_binding.push_back(b);
    }
    for (size_t i = 0; i < s.bindings.size(); i++) {
      auto& b = s.bindings[i];
      if (b.role == Role::Persistent && b.fixed->id() < first_new)
        s.persistent.push_back(static_cast<int>(i));
      if (b.role == Role::Intermediate) s.planned += static_cast<int64_t>(b.fixed->nbytes());
    }
    s.captured = true;
    if (ctx.debug >= 1)
      std::fprintf(stderr, "jit: captured %zu launches, %zu buffers, %lld bytes of intermediates\n",
                   s.launches.size(), s.bindings.size(), static_cast<long long>(s.planned));
    return outs;
  }

  // ---- replay
  // --------------------------------------------------------------------------------------
  if (inputs.size() != s.in_sig.size())
    throw ValueError("jit: captured with " + std::to_string(s.in_sig.size()) +
                     " inputs, called with " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); i++) {
    if (inputs[i].dtype() != s.in_sig[i].first)
      throw DTypeError("jit: input " + std::to_string(i) + " is " + signature(inputs[i]) +
                       " but was captured as " + dtype_name(s.in_sig[i].first) +
                       ir::shape_str(s.in_sig[i].second));
    if (inputs[i].sizes() != s.in_sig[i].second)
      throw ShapeError("jit: input " + std::to_string(i) + " is " + signature(inputs[i]) +
                       " but was captured as " + dtype_name(s.in_sig[i].first) +
                       ir::shape_str(s.in_sig[i].second));
  }
  for (int b : s.persistent)
    if (s.bindings[b].fixed.use_count() == 1)
      throw Error("jit: a buffer bound at capture (" +
                  std::string(dtype_name(s.bindings[b].fixed->dtype())) + "[" +
                  std::to_string(s.bindings[b].fixed->numel()) +
                  "]) was released by its owner (was a parameter replaced?); call reset() to "
                  "capture again");
  s.replays++;
  std::vector<StorageRef> out_store(s.out_sig.size());
  for (size_t i = 0; i < s.out_sig.size(); i++) {
    auto& b = s.bindings[s.out_binding[i]];
    if (b.role == Role::Output)
      out_store[i] =
          std::make_shared<ir::Storage>(s.out_sig[i].first, ir::shape_numel(s.out_sig[i].second));
  }
  for (auto& b : s.bindings)
    if (b.role == Role::RngKey)
      detail::next_rng_key(b.fixed->rng_draws, static_cast<int64_t*>(b.fixed->data()));
  auto storage_of = [&](int bi) -> const StorageRef& {
    const Binding& b = s.bindings[bi];
    if (b.role == Role::Input) return inputs[b.index].node()->storage;
    if (b.role == Role::Output) return out_store[b.index];
    return b.fixed;
  };
  std::vector<void*> ptrs;
  for (auto& l : s.launches) {
    if (!l.program) {
      auto& dst = storage_of(l.bindings[0]);
      std::memcpy(dst->data(), storage_of(l.bindings[1])->data(), dst->nbytes());
      continue;
    }
    ptrs.clear();
    for (int bi : l.bindings) ptrs.push_back(storage_of(bi)->data());
    if (ctx.debug >= 2 || ctx.profile_kernels) {
      engine::Launch el{l.program, {}};
      for (int bi : l.bindings) el.buffers.push_back(storage_of(bi));
      engine::run_launch(el);
    } else {
      l.program->launch(ptrs.data());
    }
  }
  std::vector<Tensor> outs;
  for (size_t i = 0; i < s.out_sig.size(); i++) {
    StorageRef st = s.bindings[s.out_binding[i]].role == Role::Output
                        ? out_store[i]
                        : storage_of(s.out_binding[i]);
    outs.push_back(detail::make_tensor_rg(ir::make_buffer(st, s.out_sig[i].second), false));
  }
  if (ctx.debug >= 1)
    std::fprintf(stderr, "jit: replay %lld (%zu launches)\n", static_cast<long long>(s.replays),
                 s.launches.size());
  return outs;
}

}  // namespace ember
