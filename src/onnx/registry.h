// The op table: ONNX op type -> implementation, built from the list in ops/ops.def (the
// implementations are in src/onnx/ops/*.cpp). Ops of the default domain ("" or "ai.onnx") are
// keyed by their type, those of other domains by "domain:type".
#pragma once
#include <string>

#include "op_context.h"

namespace ember::onnx {

/// An op's implementation: on tensors (fn) or on values (value_fn); one of them is set.
struct OpEntry {
  OpEntry() = default;
  OpEntry(OpFn f) : fn(f) {}
  OpEntry(ValueOpFn f) : value_fn(f) {}
  OpFn fn = nullptr;
  ValueOpFn value_fn = nullptr;
};

/// The implementation of `op_type` in `domain`, or null when ember lacks it.
const OpEntry* find_op(const std::string& domain, const std::string& op_type);

}  // namespace ember::onnx
