// What an op implementation sees of one node: its inputs as tensors, its attributes with typed,
// checked accessors, the opset version of its domain, and a way to run its sub-graphs.
#pragma once
#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/onnx/model.h"
#include "ember/onnx/value.h"
#include "ember/tensor.h"

namespace ember::onnx {

/// Runs a sub-graph (an If branch, a Loop or Scan body) with its formal inputs bound to `inputs`
/// and the enclosing scopes visible; returns its outputs.
using SubgraphRunner =
    std::function<std::vector<Value>(const ::onnx::GraphProto&, const std::vector<Value>&)>;

class OpContext {
 public:
  /// `inputs`: one per listed input, an undefined tensor for an absent (empty-named) one.
  OpContext(const ::onnx::NodeProto& node, int64_t opset, std::vector<Value> inputs,
            SubgraphRunner run_subgraph, const std::string& base_dir);

  const ::onnx::NodeProto& node;
  /// The version of the node's domain that the model imports.
  const int64_t opset;

  // ---- inputs ----------------------------------------------------------------------------------
  /// Number of inputs the node lists (absent optional ones included).
  size_t num_inputs() const { return inputs_.size(); }
  /// True when input i is given (listed with a non-empty name).
  bool has(size_t i) const {
    return i < inputs_.size() && (!inputs_[i].is_tensor() || inputs_[i].tensor().defined());
  }
  /// Input i as a tensor; ValueError when it is absent or not a tensor.
  const Tensor& in(size_t i) const;
  /// Input i as any value (a sequence or an optional too).
  const Value& value(size_t i) const;
  /// Every input as a tensor.
  std::vector<Tensor> tensors() const;
  /// The values of an integer (or bool) input, read on the host (it is realized if lazy).
  std::vector<int64_t> ints_of(size_t i) const;
  std::vector<double> floats_of(size_t i) const;
  /// True when input i is one of the model's constants (an initializer the caller did not
  /// replace, or a Constant node's output): its data is fixed, so an op may read it on the host
  /// (also inside an ember::jit capture) to pick a cheaper lowering.
  bool is_constant(size_t i) const { return i < constant_.size() && constant_[i]; }
  void set_constant_inputs(std::vector<bool> constant) { constant_ = std::move(constant); }
  /// Number of outputs the node lists, and whether output i is wanted (non-empty name).
  size_t num_outputs() const { return static_cast<size_t>(node.output_size()); }
  bool wants_output(size_t i) const { return i < num_outputs() && !node.output(i).empty(); }

  // ---- attributes (each read marks it used; check_attributes_used() rejects the others) --------
  bool has_attr(const std::string& name) const { return find(name) != nullptr; }
  int64_t attr_int(const std::string& name, std::optional<int64_t> def = std::nullopt);
  double attr_float(const std::string& name, std::optional<double> def = std::nullopt);
  std::string attr_string(const std::string& name, std::optional<std::string> def = std::nullopt);
  std::vector<int64_t> attr_ints(const std::string& name,
                                 std::optional<std::vector<int64_t>> def = std::nullopt);
  std::vector<double> attr_floats(const std::string& name,
                                  std::optional<std::vector<double>> def = std::nullopt);
  std::vector<std::string> attr_strings(const std::string& name,
                                        std::optional<std::vector<std::string>> def = std::nullopt);
  Tensor attr_tensor(const std::string& name);
  const ::onnx::GraphProto& attr_graph(const std::string& name);
  /// Marks attributes as read without using them (they do not change the result).
  void ignore_attr(std::initializer_list<const char*> names);
  /// UnsupportedError for an attribute the op did not read (an attribute ember does not know).
  void check_attributes_used() const;

  // ---- errors and sub-graphs -------------------------------------------------------------------
  [[noreturn]] void unsupported(const std::string& why) const;
  [[noreturn]] void invalid(const std::string& why) const;
  std::vector<Value> run_subgraph(const ::onnx::GraphProto& g, const std::vector<Value>& in) {
    return run_subgraph_(g, in);
  }
  /// The value `name` of the enclosing graph computed again by the nodes before this one, with
  /// some of the graph's values replaced (the Gradient op differentiates through it).
  std::function<Tensor(const std::string& name,
                       const std::unordered_map<std::string, Tensor>& replaced)>
      recompute;

 private:
  const ::onnx::AttributeProto* find(const std::string& name) const;
  const ::onnx::AttributeProto& get(const std::string& name, int type);
  std::vector<Value> inputs_;
  std::vector<bool> constant_;
  SubgraphRunner run_subgraph_;
  const std::string& base_dir_;  // where a tensor attribute's external data lies
  std::set<std::string> used_;
};

/// An op implementation: the node's outputs, in order (it may return fewer than the node lists
/// when the rest are not wanted). Ops on tensors return tensors; ops that make or take
/// sequences and optionals (and control flow, whose bodies may) return values.
using OpFn = std::vector<Tensor> (*)(OpContext&);
using ValueOpFn = std::vector<Value> (*)(OpContext&);

}  // namespace ember::onnx
