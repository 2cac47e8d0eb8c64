#include "registry.h"

#include <unordered_map>

#include "ops/ops.h"

namespace ember::onnx {

namespace {
const std::unordered_map<std::string, OpEntry>& table() {
  static const std::unordered_map<std::string, OpEntry> t = {
#define ONNX_OP(key, function) {key, OpEntry(ops::function)},
#define ONNX_VALUE_OP(key, function) {key, OpEntry(ops::function)},
#include "ops/ops.def"
#undef ONNX_OP
#undef ONNX_VALUE_OP
  };
  return t;
}
}  // namespace

const OpEntry* find_op(const std::string& domain, const std::string& op_type) {
  const bool standard = domain.empty() || domain == "ai.onnx";
  auto it = table().find(standard ? op_type : domain + ":" + op_type);
  return it == table().end() ? nullptr : &it->second;
}

}  // namespace ember::onnx
