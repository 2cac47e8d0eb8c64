// The loaded model: the checked, shape-inferred protobuf (initializer data moved out into
// tensors) and what load() derived from it.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "ember/onnx/model.h"
#include "ember/onnx/value.h"

namespace ember::onnx {

/// An initializer as a value (a tensor or a string tensor), or the reason it cannot be one (an
/// element type ember lacks): the error is raised when a node reads it, so that `ember onnx info`
/// still describes the model.
struct Initializer {
  Value value;
  std::string error;
};

struct Model::Impl {
  ::onnx::ModelProto proto;
  std::string name;                                 // the file, for error messages
  std::string base_dir;                             // where external data files are
  std::unordered_map<std::string, int64_t> opsets;  // domain ("" = default) -> version
  std::unordered_map<std::string, Initializer> initializers;
  std::vector<ValueInfo> inputs, outputs;
  std::vector<std::pair<std::string, int64_t>> op_counts;
  std::vector<std::string> unsupported;
};

/// The opset version a node of `domain` runs under ("" and "ai.onnx" are the default domain);
/// UnsupportedError when the model does not import the domain.
int64_t opset_of(const Model::Impl& m, const std::string& domain);

/// Converts one initializer (IOError for malformed data; an unsupported element type is kept as
/// the entry's error).
Initializer make_initializer(const ::onnx::TensorProto& p, const std::string& base_dir);
/// make_initializer's, taking the large raw_data of `p` (inline by now) into the tensor without a
/// copy (tensor_proto.h, take_value); `p` is left without raw_data.
Initializer take_initializer(::onnx::TensorProto& p);

/// Folds each inference BatchNormalization whose statistics are initializers into the Conv
/// before it when that Conv's weights (and bias) are initializers and its output feeds only the
/// BatchNormalization (src/onnx/fold.cpp). Initializers that are also graph inputs are never
/// folded (a caller may replace them). Returns the number of nodes folded.
int fold_batch_norms(Model::Impl& m);

/// How many times each value name is read in `g` (into `reads`): node inputs, sub-graphs' too (they
/// may read the enclosing scope), and the graph's outputs (src/onnx/fold.cpp).
void count_reads(const ::onnx::GraphProto& g, std::unordered_map<std::string, int>& reads);

/// Runs `g` with its formal inputs bound by name (`given`), inside the enclosing scopes of
/// `outer` (null for the main graph). Returns the graph outputs in order.
struct Scope;
using ValueMap = std::unordered_map<std::string, Value>;
/// `observe` (main graph only) is called after each node is built.
std::vector<Value> run_graph(const Model::Impl& m, const ::onnx::GraphProto& g,
                             const ValueMap& given, const Scope* outer,
                             const NodeObserver* observe = nullptr);

}  // namespace ember::onnx
