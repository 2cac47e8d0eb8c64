// ember/jit.h — capture a function's kernels once, replay them with new inputs (docs/design.md
// principle 7).
//
//   auto step = ember::jit([&](const std::vector<Tensor>& in) {
//     return std::vector<Tensor>{model->forward(in[0])};
//   });
//   auto out = step({x});   // 1st call: runs normally; 2nd: captures; later: replays
//
// A replay launches the captured kernels on the new input buffers: no graph building, scheduling
// or compiling. A replay does what running the function would do, or raises an Error that names
// the cause and the fix; it never returns a different value silently. Case by case:
//
//  - in-place write to an input (x.add_(1)): equal to eager; the caller's tensor is updated.
//  - in-place write to a tensor outside the function (closure, optimizer state): equal to eager.
//  - values built before a call from a tensor the call overwrites: equal to eager (they keep
//    their data, as after a realized in-place op).
//  - tensor outside the function updated in place between calls, realized or not (s.copy_(v)):
//    equal to eager (pending updates are realized before each call).
//  - lazy tensor made outside the function and read by it: equal to eager (it is a constant).
//  - tensor outside the function rebound to a new tensor (w = ...) while the old one lives on
//    elsewhere: equal to eager (rebinding any handle away from a tensor a capture read is
//    counted on that tensor, and the next call captures again).
//  - the same, when the rebinding destroyed the old tensor: Error "jit: a tensor that the
//    function read at capture was destroyed ... call reset() ..." (the variable may also have
//    gone out of scope, and running the function then would read freed memory).
//  - nested jits: equal to eager (a jit called inside a capture runs as plain code).
//  - other threads during a capture: their kernels are not recorded (a capture sees the
//    calling thread's launches only).
//  - aliasing between arguments, or between an argument and a tensor the function reads:
//    equal to eager (a change of which ones share a buffer makes the call capture again; so does
//    a call while the tensor passed at capture is still alive and another one is passed, since
//    the function may also read that tensor through its closure).
//  - a tensor the function makes and keeps outside itself (closure variable, member,
//    container): Error "jit: the function keeps a tensor it made outside itself ... return it
//    as an output instead".
//  - aliasing between outputs, or an output that is an input or a tensor from outside: equal
//    to eager (the same tensor object is returned, as eager returns it).
//  - gradients: backward() inside the function, with or without zero_grad, accumulates across
//    calls as eager (a gradient is rebound to a new tensor on every call; a change in whether a
//    gradient it accumulates into is defined makes the call capture again).
//  - input shape or dtype change: ShapeError / DTypeError "jit: input i is <sig> but was
//    captured as <sig>; call reset() to capture again (or use one jit per signature)".
//  - device change (Context::device): equal to eager (the call captures again).
//  - reading tensor data inside the function (item, to_vector, printing): Error "jit: reading
//    tensor data ... inside a jitted function is not allowed ...", unless the data is static
//    (StaticData below: computed only from sizes and constants a replay would see again).
//  - host data into a tensor inside the function (from_blob, from_vector, tensor()): Error
//    "jit: from_blob / from_vector / tensor() inside a jitted function copy host data once ...",
//    unless within a StaticData scope.
//  - host-side writes inside the function (Optimizer::set_lr, ember::load): Error "jit: a
//    host-side write ... inside a jitted function would run only at capture ...".
//  - manual_seed inside the function: Error "jit: manual_seed inside a jitted function ...".
//  - an input passed as a view of a buffer (x.t(), a slice): read in place, no copy; a call
//    with another view (shape, strides, offset) or a buffer there captures again.
//  - in-place write to an input passed as a view: Error "... which was passed as a view ..."
//    (eager raises as well).
//  - random ops: draw new numbers on every replay, as eager.
//  - plain C++ in the function (counters, branches on host values, logging) runs only on the
//    calls that are not replays: keep such state outside, or pass it as input tensors.
//
// Outputs are new tensors on every call (except the pass-through cases above) and do not
// require grad: call backward() inside the function. Buffers of parameters and optimizer state
// are bound through their tensors, so a replay always reads the live values.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "ember/support/non_copyable.h"
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

/// True while a Jit captures on the calling thread (tensor data cannot be read then; ops that
/// check data, such as gather's index check, defer to in-graph checks). A capture records the
/// kernels of its own thread only: other threads run as usual meanwhile.
bool jit_capturing();

/// Host data that a capture already fixes: sizes that only the input shapes and dtypes decide (an
/// ONNX Shape node) and values that never change (a model's constants). While a StaticData lives
/// on the calling thread, from_blob / from_vector / tensor() are allowed inside a capture, and
/// the tensors they make are static. Inside a capture, the data of a tensor computed only from
/// static tensors and constants may be read (item, to_vector): a replay, which runs with the
/// same input shapes and dtypes, would read the same values. Use it for such data only: a
/// replay reuses what the capture saw. An in-place write gives a tensor a new, non-static value.
class StaticData : support::NonCopyable {
 public:
  StaticData();
  ~StaticData();
};

/// Makes t (realized first) static, as a StaticData scope makes host data: for constants made
/// before a capture (a model's initializers).
void mark_static(const Tensor& t);

}  // namespace ember
