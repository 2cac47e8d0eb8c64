// The ONNX op implementations of src/onnx/ops/*.cpp, declared from the one list in ops.def.
#pragma once
#include <vector>

#include "../op_context.h"

namespace ember::onnx::ops {

#define ONNX_OP(key, function) std::vector<Tensor> function(OpContext& c);
#define ONNX_VALUE_OP(key, function) std::vector<Value> function(OpContext& c);
#include "ops.def"
#undef ONNX_OP
#undef ONNX_VALUE_OP

}  // namespace ember::onnx::ops
