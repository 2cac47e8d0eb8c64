#include "ember/onnx/value.h"

#include "ember/error.h"
#include "ember/support/shape_str.h"

namespace ember::onnx {

namespace {

// Each kind's name, in Value::Kind's order.
constexpr const char* kKindNames[] = {"tensor", "string tensor", "sequence", "optional"};

const char* name_of(Value::Kind k) { return kKindNames[static_cast<size_t>(k)]; }

std::string with_article(Value::Kind k) {
  return (k == Value::Kind::Optional ? "an " : "a ") + std::string(name_of(k));
}

void expect_kind(Value::Kind want, Value::Kind got) {
  if (want != got)
    throw ValueError("expected " + with_article(want) + ", got " + with_article(got));
}

}  // namespace

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
  expect_kind(Kind::Tensor, kind_);
  return tensor_;
}

const StringTensor& Value::strings() const {
  expect_kind(Kind::Strings, kind_);
  return *strings_;
}

const std::vector<Tensor>& Value::items() const {
  expect_kind(Kind::Sequence, kind_);
  return items_;
}

bool Value::has_element() const {
  expect_kind(Kind::Optional, kind_);
  return element_ != nullptr;
}

const Value& Value::element() const {
  if (!has_element()) throw ValueError("the optional is empty");
  return *element_;
}

std::string Value::kind_name() const { return name_of(kind_); }

}  // namespace ember::onnx
