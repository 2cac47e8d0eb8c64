// ember/jit.h — capture a function's kernels once, replay them with new inputs (DESIGN.md
// principle 7).
//
//   auto step = ember::jit([&](const std::vector<Tensor>& in) {
//     return std::vector<Tensor>{model->forward(in[0])};
//   });
//   auto out = step({x});   // 1st call: runs normally; 2nd: captures; later: replays
//
// A replay launches the captured kernels on the new input buffers: no graph building, scheduling
// or compiling. Buffers that existed before the capture (parameters, optimizer state, learning
// rate) are bound by identity; everything that changes them (optimizer steps, ember::load,
// in-place ops followed by realize) writes into the same buffer, so a replay always reads the live
// values. If such a buffer is released by its owner (e.g. a parameter tensor was replaced by a new
// one), the next call raises an Error instead of reading the stale buffer; call reset() to
// capture again. A replay's own in-place writes (a jitted optimizer step) are not versioned: a
// lazy value built outside the function from that state before a replay, and realized after
// it, reads the replayed data (realize such values before the next call).
//
// Inputs: realized or lazy tensors; their signature (shape, dtype) is checked on every replay and
// a mismatch raises ShapeError/DTypeError naming the input and both signatures. Outputs are fresh
// tensors on every call. Random ops draw new numbers on every replay. Reading tensor data inside
// the function while capturing raises (the value would be frozen into the replay).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "ember/tensor.h"

namespace ember {

class Jit {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
  explicit Jit(Fn fn);
  ~Jit();
  Jit(Jit&&) noexcept;
  Jit& operator=(Jit&&) noexcept;

  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);
  /// Drops the capture: the next call runs normally and the one after captures again.
  void reset();

  int64_t calls() const;
  int64_t replays() const;
  /// Kernels (and buffer copies) in the capture; 0 before it.
  int64_t captured_launches() const;
  /// Bytes of intermediate memory planned for the replay.
  int64_t planned_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

/// Wraps fn in a Jit.
inline Jit jit(Jit::Fn fn) { return Jit(std::move(fn)); }

/// True while a Jit is capturing (tensor data cannot be read then; ops that check data, such as
/// gather's index check, defer to in-graph checks).
bool jit_capturing();

}  // namespace ember
