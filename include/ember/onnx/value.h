// ember/onnx/value.h — the values an ONNX graph passes between nodes: a tensor, a sequence of
// tensors (ONNX's seq(tensor(T))), or an optional that is empty or holds a tensor or a sequence
// (optional(...)). Sequences of sequences and maps are not supported.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "ember/tensor.h"

namespace ember::onnx {

class Value {
 public:
  enum class Kind { Tensor, Sequence, Optional };

  /// A tensor value (implicit, so that a Tensor is usable where a Value is expected).
  Value(Tensor t = Tensor()) : tensor_(std::move(t)) {}
  static Value sequence(std::vector<Tensor> items);
  /// An empty optional.
  static Value none();
  /// An optional holding `v` (a tensor or a sequence).
  static Value some(const Value& v);

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  /// The tensor; ValueError for a sequence or an optional.
  const Tensor& tensor() const;
  /// The items; ValueError for a tensor or an optional.
  const std::vector<Tensor>& items() const;
  /// An optional's state and element; ValueError for a tensor or a sequence, or an empty one.
  bool has_element() const;
  const Value& element() const;
  /// "tensor", "sequence", "optional" (for messages).
  std::string kind_name() const;

 private:
  Kind kind_ = Kind::Tensor;
  Tensor tensor_;
  std::vector<Tensor> items_;
  std::shared_ptr<const Value> element_;  // optional: null when empty
};

using NamedValues = std::vector<std::pair<std::string, Value>>;

}  // namespace ember::onnx
