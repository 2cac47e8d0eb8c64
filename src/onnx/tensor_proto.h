// onnx.TensorProto <-> ember tensors: element types, data fields, external data files.
#pragma once
#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "ember/onnx/model.h"
#include "ember/onnx/value.h"
#include "ember/tensor.h"

namespace ember::onnx {

/// ember's dtype for an ONNX element type, or nullopt when ember lacks it.
std::optional<ScalarType> to_dtype(int32_t elem_type);
/// ember's dtype for an ONNX element type; UnsupportedError naming `what` when ember lacks it.
ScalarType require_dtype(int32_t elem_type, const std::string& what);
/// The ONNX element type of an ember dtype.
int32_t to_elem_type(ScalarType t);

/// The tensor a TensorProto holds, as a realized ember tensor (one copy of the data). Raw data,
/// the typed fields and external data (located relative to `base_dir`; the location must stay
/// inside it) are read; their sizes are checked against the shape. `what` names the tensor in
/// errors. Throws IOError (malformed) or UnsupportedError (element type, segments).
Tensor to_tensor(const ::onnx::TensorProto& p, const std::string& base_dir,
                 const std::string& what);

/// The strings of a STRING TensorProto (its string_data, one per element; the count is checked
/// against the shape). IOError when malformed, UnsupportedError for external or segmented data.
StringTensor to_strings(const ::onnx::TensorProto& p, const std::string& what);

/// The value a TensorProto holds: a string tensor for element type STRING, else to_tensor's.
Value to_value(const ::onnx::TensorProto& p, const std::string& base_dir, const std::string& what);

/// to_value's value, which takes `p`'s raw_data into the tensor without copying it (a string of
/// 4 KiB or more; smaller data and the other fields are copied); `p` is left without raw_data,
/// also when it throws.
/// The tensor's memory is aligned to 16 bytes (malloc's), not to ember's 64.
Value take_value(::onnx::TensorProto& p, const std::string& base_dir, const std::string& what);

/// Reads the external data of `p` (data_location EXTERNAL, located relative to `base_dir`) into its
/// raw_data, so that the message holds its data inline. IOError naming `model` and the tensor.
void inline_external_data(::onnx::TensorProto& p, const std::string& base_dir,
                          const std::string& model);

/// "tensor(float)", "seq(tensor(int64))", ... for a TypeProto.
std::string type_text(const ::onnx::TypeProto& t);

}  // namespace ember::onnx
