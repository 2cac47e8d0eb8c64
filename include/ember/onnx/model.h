// ember/onnx/model.h — ONNX models on ember: load a .onnx file, call it with tensors.
//
// `load` parses the file with ONNX's own protobuf classes (Debian's libonnx-dev), runs ONNX's
// checker (onnx::checker::check_model) and shape inference (onnx::shape_inference::InferShapes)
// and turns the initializers into realized tensors. Calling the Model builds an ember graph from
// the given tensors: lazy and fused like any other ember computation, on whichever device
// `ember::Context` names (`cpu`, `interp`). Reading an output (or `realize`) runs it.
//
// Opsets: every version of the default domain ("" / "ai.onnx") from 1 to 17 (ONNX 1.12), including
// the old attribute forms (Reshape-1's `shape`, Slice-1's `starts`/`ends`, Pad-2's `pads`,
// BatchNormalization-1..6's `spatial`/`is_test`, Upsample, ...). Ops ember lacks are reported by
// `Model::unsupported_ops` and raise UnsupportedError when the graph is run. A model importing a
// newer opset loads when ONNX 1.12's checker accepts its nodes under their opset-17 definitions
// (and runs them by those); when it does not, the IOError says which opset the model imports.
//
// Values: tensors of ember's dtypes (bool, the integers of 8 to 64 bits, float16, bfloat16,
// float32, float64), string tensors (held on the host; Identity, Cast, CastLike and
// StringNormalizer take them), sequences of tensors and optionals (ember/onnx/value.h;
// Model::run_values). complex tensors, maps and sequences of sequences or strings raise
// UnsupportedError.
//
// Inference rewrites at load time: a BatchNormalization after a Conv is folded into the Conv's
// weights and bias (Model::nodes). The values are the spec's up to float rounding.
//
// Errors: a file that cannot be read, is truncated or is not a valid ModelProto, fails the checker
// or shape inference, or names external data that cannot be read: IOError naming the file and the
// reason. A node ember cannot run (unknown op, unsupported attribute or attribute value, element
// type): UnsupportedError naming the node, its op type and opset. A wrong input (unknown name,
// missing required input, dtype or shape unlike the model's declaration): ValueError, DTypeError
// or ShapeError naming the input. Errors raised while a node is built (bad shapes, bad attribute
// values) name the node: `node 3 'conv1' (Conv-11): ...`.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ember/error.h"
#include "ember/onnx/value.h"
#include "ember/tensor.h"

namespace ember::onnx {

/// The model uses something ember cannot run: an op, an attribute value, an element type or a
/// value kind (Sequence, Optional) that ember lacks. The model itself is valid.
struct UnsupportedError : ValueError {
  using ValueError::ValueError;
};

/// One dimension of a declared shape: a number, a symbolic name (`N`), or unknown (neither).
struct Dim {
  std::optional<int64_t> value;
  std::string param;
};

/// A graph input or output as the model declares it.
struct ValueInfo {
  std::string name;
  /// ONNX's spelling of the type: "tensor(float)", "seq(tensor(int64))", "optional(...)".
  std::string type;
  /// ember's dtype for a tensor of an element type ember has; nullopt otherwise.
  std::optional<ScalarType> dtype;
  /// ONNX's TensorProto.DataType of a tensor (1 float, 7 int64, ...; 0 when not a tensor).
  int32_t elem_type = 0;
  /// The declared shape; nullopt when the model gives none (any rank).
  std::optional<std::vector<Dim>> shape;
  /// An initializer of the same name gives the input a default value (so it may be omitted).
  bool has_default = false;
};

/// A node of the main graph as the file lists it.
struct NodeInfo {
  std::string name;     ///< may be empty
  std::string op_type;  ///< "Conv"; ops of other domains as in op_counts ("domain:Op")
  std::vector<std::string> inputs, outputs;  ///< value names ("" for an omitted optional input)
};

/// Called after each node of the main graph is built (Model::run's observer): the node's index
/// in Model::nodes() and its outputs (undefined Values for outputs it does not produce).
using NodeObserver = std::function<void(int node, const std::vector<Value>& outputs)>;

class Model {
 public:
  /// Graph inputs in declaration order (inputs that are only initializers are not listed).
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  /// (domain, version) of each opset the model imports; the default domain is "ai.onnx".
  std::vector<std::pair<std::string, int64_t>> opsets() const;
  /// (op type, number of nodes), most frequent first; ops of other domains are "domain:Op". Nodes
  /// of sub-graphs (If, Loop, Scan bodies) count too.
  std::vector<std::pair<std::string, int64_t>> op_counts() const;
  /// The op types among op_counts() that ember cannot run.
  std::vector<std::string> unsupported_ops() const;
  /// The main graph's nodes as ember runs them, in the file's (topological) order; sub-graphs'
  /// nodes are not listed. An inference BatchNormalization folded into the Conv before it at load
  /// time (its statistics and the Conv's weights are initializers, not graph inputs, and the Conv's
  /// output feeds nothing else) is not a node: the Conv produces its output. op_counts() counts
  /// the file's nodes.
  std::vector<NodeInfo> nodes() const;
  /// The producer and IR version recorded in the file ("pytorch 1.12", 8).
  std::string producer() const;
  int64_t ir_version() const;

  /// Runs the graph on named inputs; returns every graph output, in declaration order. Inputs
  /// with a default (an initializer) may be left out. Throws (see the file comment).
  NamedTensors run(const NamedTensors& inputs) const;
  /// The same, calling `observe` after each node of the main graph is built (a profiler
  /// attributes the ember graph to the model's nodes: `ember onnx run --profile`).
  NamedTensors run(const NamedTensors& inputs, const NodeObserver& observe) const;
  /// The same with the inputs given positionally, in the order of inputs().
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  /// The same for models whose inputs or outputs are sequences or optionals (ember/onnx/value.h).
  NamedValues run_values(const NamedValues& inputs) const;

  struct Impl;
  explicit Model(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

/// Loads an ONNX model file; external data files are looked up relative to its directory.
Model load(const std::string& path);
/// Loads a model from the bytes of a .onnx file; `base_dir` is where external data files are.
/// `name` stands for the file in error messages.
Model load_from_bytes(const std::string& bytes, const std::string& base_dir = ".",
                      const std::string& name = "<bytes>");

/// Reads a file holding one serialized onnx.TensorProto (the backend tests' input_N.pb and
/// output_N.pb). Throws IOError for a malformed file, UnsupportedError for an element type ember
/// lacks or a file that holds a Sequence or Optional value.
Tensor load_tensor(const std::string& path);
/// Reads a file holding one serialized onnx.TensorProto, SequenceProto or OptionalProto, as
/// `type` (ONNX's spelling, ValueInfo::type: "tensor(float)", "seq(tensor(int64))", ...) says;
/// "tensor(string)" reads as a string tensor.
/// A "tensor(bfloat16)" stored as UINT16 words (as ONNX 1.12's test generator writes them) reads
/// as those words' bfloat16 values.
Value load_value(const std::string& path, const std::string& type);
/// The ONNX element type and shape stored in such a file, whether or not ember has the dtype.
struct TensorFileInfo {
  int32_t elem_type = 0;
  std::string type;  // "tensor(float16)", ...
  std::vector<int64_t> shape;
};
TensorFileInfo tensor_file_info(const std::string& path);

/// ONNX's name of an element type: "float", "int64", "float16", ... ("undefined" for 0, the
/// number for an unknown one).
std::string elem_type_name(int32_t elem_type);

}  // namespace ember::onnx
