// Capture and replay (see include/ember/jit.h for the contract, one line per way a replay could
// differ from running the function).
//
// A capture records the launches of one run of the function and which tensors it touched: its
// inputs, the tensors that existed before the call (closure tensors, parameters, optimizer state:
// "externals") and the gradient slots of leaves. A replay resolves those tensors again (so a
// buffer is bound through the tensor that holds it, not frozen), checks that they alias each
// other as they did at capture (else it captures again), versions the buffers it overwrites as
// a realized in-place op would, launches, and rebinds gradients and outputs as the function did.
#include "ember/jit.h"

#include <cstdio>

#include "ember/context.h"
#include "engine/realize.h"
#include "tensor/jit_capture.h"
#include "tensor/tensor_impl.h"

namespace ember {

using detail::jit::Capture;

struct Jit::State {
  Fn fn;
  int64_t calls = 0, replays = 0;
  std::unique_ptr<Capture> cap;
  std::vector<bool> views;  // per input of the current call: a view of a buffer
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
int64_t Jit::captured_launches() const {
  return s_->cap ? static_cast<int64_t>(s_->cap->launches.size()) : 0;
}
int64_t Jit::planned_bytes() const { return s_->cap ? s_->cap->planned : 0; }

namespace {

std::string signature(ScalarType t, const Shape& s) { return dtype_name(t) + ir::shape_str(s); }

// DEBUG=1: what a warm-up or capture call cost in compilation (this thread's compile tally
// since `before`: a compile on another thread is not this call's).
void print_compile(const char* what, const engine::CompileTally& before) {
  const engine::CompileTally now = engine::compile_tally_this_thread();
  std::fprintf(stderr,
               "jit: %s compiled %lld kernels in %.1f ms (%lld from the disk cache, %lld compiler "
               "processes)\n",
               what, static_cast<long long>(now.kernels - before.kernels),
               (now.seconds - before.seconds) * 1e3,
               static_cast<long long>(now.kernels_from_disk_cache - before.kernels_from_disk_cache),
               static_cast<long long>(now.compiler_runs - before.compiler_runs));
}

// Pending in-place updates (made outside the function, e.g. `s.copy_(v)` without realize) are
// realized first, so that the function reads their new values from their buffers.
void flush_pending_writes() {
  auto pending = detail::pending_writes();
  if (!pending.empty()) realize(pending);
}

// Realizes the inputs in place (each keeps its identity, so in-place writes reach the caller's
// tensor): each is then a buffer or a view of one (realize computes no view). A view is passed
// as it is, and the capture binds its buffer (tensor/jit_view.h): x.t() costs no copy. The
// function may not write into a view (in-place ops on views are not supported).
void prepare_inputs(const std::vector<Tensor>& raw, std::vector<bool>& views) {
  for (auto& t : raw)
    if (!t.defined()) throw ValueError("jit: undefined input tensor");
  realize(raw);
  views.resize(raw.size());
  for (size_t i = 0; i < raw.size(); i++) views[i] = raw[i].node()->op != ir::Op::BUFFER;
}

// Drops the references a capture keeps between matches() and replay(), on every exit.
struct ReleaseGuard {
  Capture& c;
  ~ReleaseGuard() { c.release(); }
};

// The first call runs the function as plain code, its kernels compiled as one batch (until the
// function reads data), so that lazily initialised state (optimizer moments) exists at capture.
std::vector<Tensor> warm_up(const Jit::Fn& fn, const std::vector<Tensor>& raw_inputs,
                            const engine::CompileTally& before, int debug) {
  engine::DeferLaunches defer;
  auto outs = fn(raw_inputs);
  realize(outs);
  defer.finish();
  if (debug >= 1) print_compile("warm-up call", before);
  return outs;
}

// A replay takes inputs of the captured count, dtypes and shapes only.
void check_signature(const Capture& c, const std::vector<Tensor>& inputs) {
  if (inputs.size() != c.in_sig.size())
    throw ValueError("jit: captured with " + std::to_string(c.in_sig.size()) +
                     " inputs, called with " + std::to_string(inputs.size()) +
                     "; call reset() to capture again");
  for (size_t i = 0; i < inputs.size(); i++) {
    const auto& [dt, shape] = c.in_sig[i];
    const bool dtype_ok = inputs[i].dtype() == dt;
    if (dtype_ok && inputs[i].sizes() == shape) continue;  // the message only on a mismatch
    std::string msg = "jit: input " + std::to_string(i) + " is " +
                      signature(inputs[i].dtype(), inputs[i].sizes()) + " but was captured as " +
                      signature(dt, shape) +
                      "; call reset() to capture again (or use one jit per signature)";
    if (!dtype_ok) throw DTypeError(msg);
    throw ShapeError(msg);
  }
}

// DEBUG=1: what a capture compiled and what its replays will allocate.
void print_capture(const Capture& c, const engine::CompileTally& before) {
  print_compile("capture", before);
  int64_t fresh_bytes = 0;
  for (auto& [dt, n] : c.fresh) fresh_bytes += n * static_cast<int64_t>(element_size(dt));
  std::fprintf(stderr,
               "jit: captured %zu launches, %zu buffers, %lld bytes of intermediates, %zu new "
               "buffers per replay (%lld bytes)\n",
               c.launches.size(), c.bindings.size(), static_cast<long long>(c.planned),
               c.fresh.size(), static_cast<long long>(fresh_bytes));
}

}  // namespace

// Phases: plain run inside another capture; warm-up (first call); replay of the capture when the
// inputs and the tensors it touched still match it; else a new capture.
std::vector<Tensor> Jit::operator()(const std::vector<Tensor>& raw_inputs) {
  State& s = *s_;
  // Called while another jit captures: run as plain code, so the outer capture records it.
  if (engine::capturing()) return s.fn(raw_inputs);
  s.calls++;
  const Context& ctx = Context::get();
  const engine::CompileTally before = engine::compile_tally_this_thread();
  if (s.calls == 1) return warm_up(s.fn, raw_inputs, before, ctx.debug);
  flush_pending_writes();
  const std::vector<Tensor>& inputs = raw_inputs;
  prepare_inputs(inputs, s.views);

  if (s.cap) {
    Capture& c = *s.cap;
    check_signature(c, inputs);
    {
      ReleaseGuard release{c};
      if (c.matches(inputs, s.views, ctx.device)) {
        s.replays++;
        auto outs = c.replay(inputs);
        if (ctx.debug >= 1)
          std::fprintf(stderr, "jit: replay %lld (%zu launches)\n",
                       static_cast<long long>(s.replays), c.launches.size());
        return outs;
      }
    }
    if (ctx.debug >= 1)
      std::fprintf(stderr, "jit: %s changed since the capture; capturing again\n",
                   c.mismatch.c_str());
    s.cap.reset();
  }
  auto cap = std::make_unique<Capture>();
  auto outs = cap->record(s.fn, inputs, s.views, ctx.device);
  s.cap = std::move(cap);
  if (ctx.debug >= 1) print_capture(*s.cap, before);
  return outs;
}

bool jit_capturing() { return engine::capturing(); }

}  // namespace ember
