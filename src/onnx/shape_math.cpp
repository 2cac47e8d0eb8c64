// Shape arithmetic on the host (shape_math.h).
#include "shape_math.h"

#include <set>
#include <string>

#include "ember/context.h"
#include "ember/tensor.h"

namespace ember::onnx {

namespace {

// Ops whose outputs depend only on their inputs' values (no draws, no sub-graphs).
const std::set<std::string>& pure_ops() {
  static const std::set<std::string> ops = {
      "Abs",      "Add",     "Cast",   "Ceil",       "Concat",    "ConstantOfShape",
      "Div",      "Equal",   "Expand", "Floor",      "Gather",    "Greater",
      "Identity", "Less",    "Max",    "Min",        "Mod",       "Mul",
      "Neg",      "Not",     "Range",  "ReduceProd", "ReduceSum", "Reshape",
      "Slice",    "Squeeze", "Sub",    "Tile",       "Transpose", "Unsqueeze",
      "Where"};
  return ops;
}

constexpr int64_t kMaxElements = 64;

}  // namespace

bool outputs_constant(const ::onnx::NodeProto& n, const std::vector<bool>& constant) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  const std::string& op = n.op_type();
  if (op == "Constant" || op == "Shape" || op == "Size") return true;
  if (!pure_ops().count(op)) return false;
  for (int i = 0; i < n.input_size(); i++)
    if (!n.input(i).empty() && !constant[static_cast<size_t>(i)]) return false;
  return true;
}

bool small_values(const std::vector<Value>& in) {
  for (const Value& v : in)
    if (v.is_tensor() && v.tensor().defined() && v.tensor().numel() > kMaxElements) return false;
  return true;
}

void to_host_data(std::vector<Value>& out) {
  for (Value& v : out) {
    if (!v.is_tensor()) continue;
    const Tensor& t = v.tensor();
    if (!t.defined() || t.dtype() != kInt64 || t.numel() > kMaxElements || t.is_realized())
      continue;
    std::vector<int64_t> data;
    {
      DeviceGuard interp("interp");
      data = t.to_vector<int64_t>();
    }
    v = Value(from_vector(data, t.sizes()));  // a buffer of its own, not a view
  }
}

}  // namespace ember::onnx
