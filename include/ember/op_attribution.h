// ember/op_attribution.h — which kernel launches compute which ops of a user-level graph (an ONNX
// model's nodes), so that a profile of a fused graph can give per-op kernel times (`ember onnx
// run --profile`). Fusion makes one kernel compute parts of several ops: such a launch names all
// of them, and its time is theirs together; nothing here splits a kernel's time.
//
// Use: with Context::profile on, open an OpAttribution, build the graph op by op and call mark()
// after each op, realize the outputs, then read launches().
#pragma once
#include <memory>
#include <vector>

#include "ember/support/non_copyable.h"
#include "ember/tensor.h"

namespace ember {

class OpAttribution : support::NonCopyable {
 public:
  /// Starts logging the schedules of this thread's realizes (until destruction).
  OpAttribution();
  ~OpAttribution();

  /// Marks the graph nodes below `outputs` that no earlier mark reached as op `op`'s own (a
  /// node two ops build alike is one node: the first op's). Buffers and constants are nobody's.
  void mark(int op, const std::vector<Tensor>& outputs);

  /// One entry per kernel launch the profile recorded since construction (profiled_kernels()
  /// order from there): the ops whose marked nodes the launch computes, ascending. Empty for a
  /// launch that computes none of them, or whose realize was not scheduled while this object
  /// was open (a cached plan, a jit replay): such launches are not attributed.
  std::vector<std::vector<int>> launches() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ember
