// Shape arithmetic on the host: the values an exported graph computes from sizes and constants
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) are small integer tensors that a later op
// reads on the host. Built as kernels, each read was its own realize, and at a cold start its own
// compiler process (bert_mini started 14, 4 without them). Here such values are computed on the
// interp device and kept as host data, as the model's constants are. The interp device is
// selected process-wide (DeviceGuard) while such a node runs: another thread's realizes in that
// moment would run interpreted too (slower, same values).
#pragma once
#include <onnx/onnx_pb.h>

#include <vector>

#include "ember/onnx/value.h"

namespace ember::onnx {

/// True when node n's outputs are fixed by the model and the input shapes alone: a Constant, a
/// Shape or Size, or a pure op on sizes and integers (Gather, Unsqueeze, Concat, Cast, arithmetic
/// ...) whose given inputs are all such values (`constant`, one per listed input; absent ones
/// count as constant).
bool outputs_constant(const ::onnx::NodeProto& n, const std::vector<bool>& constant);

/// True when every given tensor of `in` has at most 64 elements: a node whose outputs are constant
/// then runs on the interp device (its own host reads, such as Gather's index check, included).
bool small_values(const std::vector<Value>& in);

/// Replaces each small int64 tensor of `out` (at most 64 elements) by its value as host data,
/// computed on the interp device (no kernel is compiled). For the outputs of a node for which
/// outputs_constant holds.
void to_host_data(std::vector<Value>& out);

}  // namespace ember::onnx
