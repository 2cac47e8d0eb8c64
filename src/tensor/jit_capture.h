// One capture of a jitted function (tensor/jit.cpp): the launches it recorded, where each of
// their buffers comes from on a replay, and what the function did to the tensors around it.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/jit.h"
#include "engine/launch_list.h"
#include "engine/launch_sink.h"

namespace ember::detail::jit {

using engine::StorageRef;
class Observer;  // jit_observer.h

/// Where a replay finds one buffer of the captured launches.
enum class Role : uint8_t {
  Source,  // the current buffer of source `index`: an input, or an external tensor
  Fresh,   // a new buffer on every replay: outputs, new gradients, values kept by the caller
  Fixed,   // the same buffer on every replay: intermediates, buffers no source reaches
  RngKey,  // fixed, refilled with new random keys on every replay
};

struct Binding {
  Role role = Role::Fixed;
  int index = -1;    // Source: source index; Fresh: index into Capture::fresh
  StorageRef fixed;  // Fixed / RngKey: the buffer; Fresh: the capture's (for dtype and size)
  bool written = false;
  bool preexisting = false;  // the buffer existed before the capture
  int64_t rng_draws = 0;     // RngKey: the numbers its kernel draws (detail::rng_draws)
};

struct CapturedLaunch {
  std::shared_ptr<runtime::Program> program;  // null: copy bindings[1] -> bindings[0]
  std::vector<int> bindings;
};

/// How a replay produces an output, or what it leaves in a gradient slot.
struct OutSpec {
  enum Kind : uint8_t { Buffer, SameAs, Input, External, SlotGrad, Undefined, Unchanged };
  Kind kind = Buffer;
  int index = -1;  // binding / earlier output / input / external / slot
  ScalarType dtype = kFloat32;
  Shape shape;
};

/// A tensor that existed before the capture and that the function used (closure tensors,
/// parameters, optimizer state), bound on every replay through the tensor, not its buffer.
struct External {
  std::weak_ptr<TensorImpl> impl;  // slot < 0
  int slot = -1;                   // >= 0: the gradient that slots[slot]'s owner holds
  bool written = false;            // the function wrote it in place
  uint64_t rebinds = 0;            // impl's rebinds when the capture ended (slot < 0)
};

/// The gradient of a leaf made before the capture that the function read or replaced.
struct GradSlot {
  std::weak_ptr<TensorImpl> owner;  // input < 0
  int input = -1;                   // >= 0: the owner is that input
  bool read_first = false;          // read before replaced: the state before the call matters
  bool before_defined = false;
  ScalarType dtype = kFloat32;  // of the gradient before the call
  Shape shape;
  const TensorImpl* before = nullptr;
  OutSpec after;
};

/// Gives a tensor that holds a lazy value a buffer of its own (a value is a value: nothing the
/// caller can observe changes); a view of a buffer gets a contiguous copy.
void make_concrete(const Tensor& t);

struct Capture {
  // ---- key: a replay runs only when these still hold -------------------------------------------
  std::vector<std::pair<ScalarType, Shape>> in_sig;
  // Inputs passed as views of buffers, bound through their buffers (tensor/jit_view.h), and
  // their views' keys (empty for the other inputs).
  std::vector<bool> views;
  std::vector<std::vector<int64_t>> view_keys;
  // The tensors passed at capture. While one is alive and a call passes another, the function
  // may still read it through its closure, which the capture could not tell from reading the
  // input: such a call captures again.
  std::vector<std::weak_ptr<TensorImpl>> input_impls;
  std::string device;
  std::vector<int> partition;  // per source: the first source with the same buffer, -1: none
  std::vector<std::pair<ScalarType, int64_t>> source_sig;  // per source: its buffer's
  std::string mismatch;                                    // what differed, for DEBUG

  // ---- the recording ---------------------------------------------------------------------------
  std::vector<Binding> bindings;
  std::vector<CapturedLaunch> launches;
  std::vector<std::pair<ScalarType, int64_t>> fresh;
  std::vector<runtime::Device*> fresh_place;  // the memory of each (null: host)
  std::vector<External> externals;
  std::vector<GradSlot> slots;
  std::vector<bool> input_written;
  std::vector<OutSpec> outs;
  std::vector<int> check_alive;  // Fixed bindings of buffers made before the capture
  int64_t planned = 0;
  // ---- what a replay runs: the launches on slots (bound: the bindings that are not Fresh, in
  // order; then the Fresh ones), and the binding of each bound slot
  // --------------------------------
  engine::LaunchList list;
  std::vector<int> bound_binding;

  /// Runs fn once while recording (the capture call); returns its outputs. inputs: realized
  /// buffers or views of buffers (views[i]).
  std::vector<Tensor> record(const Jit::Fn& fn, const std::vector<Tensor>& inputs,
                             const std::vector<bool>& views, const std::string& device);
  /// Resolves the sources for a replay (kept for replay()); false (with `mismatch` set) when the
  /// capture does not apply (then the caller captures again). Throws Error when a bound tensor
  /// was destroyed.
  bool matches(const std::vector<Tensor>& inputs, const std::vector<bool>& views,
               const std::string& device);
  /// Launches the capture on the sources matches() resolved.
  std::vector<Tensor> replay(const std::vector<Tensor>& inputs);
  /// Drops the references matches() and replay() keep between them (their vectors keep their
  /// memory, so that a replay allocates only what it returns).
  void release();

 private:
  // The steps of record(), in order.
  std::vector<Tensor> run_recorded(const Jit::Fn& fn, const std::vector<Tensor>& inputs,
                                   Observer& obs, engine::LaunchLog& rec);
  void return_values(std::vector<Tensor>& outs, Observer& obs);
  std::vector<const runtime::Storage*> note_sources(const std::vector<StorageRef>& in_storage,
                                                    Observer& obs);
  // Where each buffer of the recorded launches comes from (bind()).
  struct Binder {
    uint64_t first_new;  // buffers with smaller ids existed before the capture
    std::unordered_map<const runtime::Storage*, int> index, source_index;
  };
  int bind(const StorageRef& st, Binder& binder);
  void bind_launches(engine::LaunchLog& rec, Binder& binder);
  void check_writes(const std::vector<const runtime::Storage*>& src_storage, size_t n_in);
  void make_fresh(int binding);
  OutSpec spec_of(const Tensor& t, Observer& obs,
                  const std::unordered_map<const TensorImpl*, int>& slot_after, Binder& binder);
  void specify_outputs(const std::vector<Tensor>& outs_now, const std::vector<Tensor>& inputs,
                       Observer& obs, Binder& binder);
  void keep_held_buffers();
  // The launch list of the recorded launches and memory plan (end of record()).
  void build_list();

  std::vector<Tensor> sources_;                     // the inputs, then the external tensors
  std::vector<StorageRef> bound_;                   // per source: its buffer (null: none)
  std::vector<const runtime::Storage*> bound_ptr_;  // the same, for the aliasing check
  std::vector<StorageRef> fresh_store_;             // a replay's Fresh buffers
  std::vector<const StorageRef*> slots_;            // a replay's bound slots
};

}  // namespace ember::detail::jit
