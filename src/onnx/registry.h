// The op table: ONNX op type -> implementation, filled by one registration function per op
// family (src/onnx/ops/*.cpp). Ops of the default domain ("" or "ai.onnx") are keyed by their
// type, those of other domains by "domain:type".
#pragma once
#include <string>
#include <unordered_map>

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
using OpTable = std::unordered_map<std::string, OpEntry>;

/// The implementation of `op_type` in `domain`, or null when ember lacks it.
const OpEntry* find_op(const std::string& domain, const std::string& op_type);

namespace ops {
// One per family (src/onnx/ops/<family>.cpp); each adds its ops to the table.
void add_elementwise_ops(OpTable& t);
void add_math_ops(OpTable& t);
void add_shape_ops(OpTable& t);
void add_generator_ops(OpTable& t);
void add_reduce_ops(OpTable& t);
void add_linalg_ops(OpTable& t);
void add_conv_pool_ops(OpTable& t);
void add_normalization_ops(OpTable& t);
void add_index_ops(OpTable& t);
void add_resize_ops(OpTable& t);
void add_control_ops(OpTable& t);
void add_rnn_ops(OpTable& t);
void add_quantize_ops(OpTable& t);
void add_signal_ops(OpTable& t);
void add_misc_ops(OpTable& t);
void add_training_ops(OpTable& t);
void add_grid_sample_ops(OpTable& t);
void add_roi_text_ops(OpTable& t);
void add_sequence_ops(OpTable& t);
void add_string_ops(OpTable& t);
}  // namespace ops

}  // namespace ember::onnx
