// Helpers the op families share: axis arithmetic and ONNX's pre-opset-7 broadcasting.
#pragma once
#include <string>
#include <vector>

#include "../op_context.h"
#include "ops.h"

namespace ember::onnx::ops {

/// An ONNX axis in [-rank, rank) as a dim in [0, rank); IndexError otherwise.
int64_t axis(int64_t a, int64_t rank);
/// The same for a list (duplicates rejected), kept in the given order.
std::vector<int64_t> axes(const std::vector<int64_t>& a, int64_t rank);

/// The second operand of a binary op as numpy broadcasting sees it. Opsets before 7 broadcast
/// only with the attribute broadcast=1, aligning b's dims with a's from `axis` (default: the
/// trailing dims); without it the shapes must be equal.
Tensor legacy_broadcast(OpContext& c, const Tensor& a, const Tensor& b);

/// The single output as a vector (most ops have one).
inline std::vector<Tensor> one(Tensor t) { return {std::move(t)}; }

}  // namespace ember::onnx::ops
