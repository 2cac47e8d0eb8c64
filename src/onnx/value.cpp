#include "ember/onnx/value.h"

#include "ember/error.h"
#include "ember/support/shape_str.h"

namespace ember::onnx {

Value Value::strings(StringTensor s) {
  int64_t n = 1;
  for (int64_t d : s.shape) n *= d;
  if (static_cast<int64_t>(s.data.size()) != n)
    throw ValueError("a string tensor of shape " + support::shape_str(s.shape) + " holds " +
                     std::to_string(s.data.size()) + " strings, not " + std::to_string(n));
  Value v;
  v.kind_ = Kind::Strings;
  v.strings_ = std::make_shared<const StringTensor>(std::move(s));
  return v;
}

Value Value::sequence(std::vector<Tensor> items) {
  Value v;
  v.kind_ = Kind::Sequence;
  v.items_ = std::move(items);
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = Kind::Optional;
  return v;
}

Value Value::some(const Value& e) {
  if (e.kind_ == Kind::Optional) throw ValueError("an optional cannot hold an optional");
  Value v;
  v.kind_ = Kind::Optional;
  v.element_ = std::make_shared<const Value>(e);
  return v;
}

const Tensor& Value::tensor() const {
  if (kind_ != Kind::Tensor) throw ValueError("expected a tensor, got a " + kind_name());
  return tensor_;
}

const StringTensor& Value::strings() const {
  if (kind_ != Kind::Strings) throw ValueError("expected a string tensor, got a " + kind_name());
  return *strings_;
}

const std::vector<Tensor>& Value::items() const {
  if (kind_ != Kind::Sequence) throw ValueError("expected a sequence, got a " + kind_name());
  return items_;
}

bool Value::has_element() const {
  if (kind_ != Kind::Optional) throw ValueError("expected an optional, got a " + kind_name());
  return element_ != nullptr;
}

const Value& Value::element() const {
  if (!has_element()) throw ValueError("the optional is empty");
  return *element_;
}

std::string Value::kind_name() const {
  switch (kind_) {
    case Kind::Tensor:
      return "tensor";
    case Kind::Strings:
      return "string tensor";
    case Kind::Sequence:
      return "sequence";
    case Kind::Optional:
      return "optional";
  }
  return "value";
}

}  // namespace ember::onnx
