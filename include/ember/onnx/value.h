// ember/onnx/value.h — the values an ONNX graph passes between nodes: a tensor, a string tensor
// (ONNX's tensor(string), held on the host: ember's tensors have no string dtype), a sequence of
// tensors (ONNX's seq(tensor(T))), or an optional that is empty or holds one of those
// (optional(...)). Sequences of sequences or of strings, and maps, are not supported.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember::onnx {

/// ONNX's tensor(string): a shape and its elements in row-major order (data.size() is the shape's
/// element count). Only the ops that move strings or convert them take one (Identity, Cast,
/// CastLike, StringNormalizer); the others reject it with an UnsupportedError.
struct StringTensor {
  Shape shape;
  std::vector<std::string> data;
};

class Value {
 public:
  enum class Kind { Tensor, Strings, Sequence, Optional };

  /// A tensor value (implicit, so that a Tensor is usable where a Value is expected).
  Value(Tensor t = Tensor()) : tensor_(std::move(t)) {}
  /// A string tensor; ValueError when data.size() is not the shape's element count.
  static Value strings(StringTensor s);
  static Value sequence(std::vector<Tensor> items);
  /// An empty optional.
  static Value none();
  /// An optional holding `v` (a tensor or a sequence).
  static Value some(const Value& v);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  bool is_strings() const { return kind_ == Kind::Strings; }
  /// The tensor; ValueError for the other kinds.
  const Tensor& tensor() const;
  /// The string tensor; ValueError for the other kinds.
  const StringTensor& strings() const;
  /// The items; ValueError for a tensor or an optional.
  const std::vector<Tensor>& items() const;
  /// An optional's state and element; ValueError for a tensor or a sequence, or an empty one.
  bool has_element() const;
  const Value& element() const;
  /// "tensor", "string tensor", "sequence", "optional" (for messages).
  std::string kind_name() const;

 private:
  Kind kind_ = Kind::Tensor;
  Tensor tensor_;
  std::shared_ptr<const StringTensor> strings_;
  std::vector<Tensor> items_;
  std::shared_ptr<const Value> element_;  // optional: null when empty
};

using NamedValues = std::vector<std::pair<std::string, Value>>;

}  // namespace ember::onnx
