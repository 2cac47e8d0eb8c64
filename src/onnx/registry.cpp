#include "registry.h"

namespace ember::onnx {

namespace {
const OpTable& table() {
  static const OpTable t = [] {
    OpTable t;
    ops::add_elementwise_ops(t);
    ops::add_math_ops(t);
    ops::add_shape_ops(t);
    ops::add_generator_ops(t);
    ops::add_reduce_ops(t);
    ops::add_linalg_ops(t);
    ops::add_conv_pool_ops(t);
    ops::add_normalization_ops(t);
    ops::add_index_ops(t);
    ops::add_resize_ops(t);
    ops::add_control_ops(t);
    ops::add_rnn_ops(t);
    ops::add_quantize_ops(t);
    ops::add_signal_ops(t);
    ops::add_misc_ops(t);
    ops::add_training_ops(t);
    ops::add_grid_sample_ops(t);
    ops::add_roi_text_ops(t);
    ops::add_sequence_ops(t);
    ops::add_string_ops(t);
    return t;
  }();
  return t;
}
}  // namespace

const OpEntry* find_op(const std::string& domain, const std::string& op_type) {
  const bool standard = domain.empty() || domain == "ai.onnx";
  auto it = table().find(standard ? op_type : domain + ":" + op_type);
  return it == table().end() ? nullptr : &it->second;
}

}  // namespace ember::onnx
