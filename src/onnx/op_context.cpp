#include "op_context.h"

#include "tensor_proto.h"

namespace ember::onnx {

using ::onnx::AttributeProto;

OpContext::OpContext(const ::onnx::NodeProto& node, int64_t opset, std::vector<Value> inputs,
                     SubgraphRunner run_subgraph, const std::string& base_dir)
    : node(node),
      opset(opset),
      inputs_(std::move(inputs)),
      run_subgraph_(std::move(run_subgraph)),
      base_dir_(base_dir) {}

const Value& OpContext::value(size_t i) const {
  if (!has(i))
    throw ValueError("input " + std::to_string(i) + " is required but " +
                     (i < inputs_.size() ? "empty" : "not given"));
  return inputs_[i];
}

const Tensor& OpContext::in(size_t i) const {
  const Value& v = value(i);
  if (!v.is_tensor())
    throw UnsupportedError("input " + std::to_string(i) + " is a " + v.kind_name() +
                           "; the op takes a tensor");
  return v.tensor();
}

std::vector<Tensor> OpContext::tensors() const {
  std::vector<Tensor> r;
  for (size_t i = 0; i < inputs_.size(); i++) r.push_back(in(i));
  return r;
}

std::vector<int64_t> OpContext::ints_of(size_t i) const {
  const Tensor& t = in(i);
  if (t.is_floating_point())
    throw DTypeError("input " + std::to_string(i) + " must be an integer tensor, got " +
                     dtype_name(t.dtype()));
  return t.to_vector<int64_t>();
}

std::vector<double> OpContext::floats_of(size_t i) const { return in(i).to_vector<double>(); }

const AttributeProto* OpContext::find(const std::string& name) const {
  for (const auto& a : node.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

const AttributeProto& OpContext::get(const std::string& name, int type) {
  const AttributeProto* a = find(name);
  used_.insert(name);
  // An attribute written by an old exporter may lack its type field; its value field says it.
  if (a->type() != type && a->type() != AttributeProto::UNDEFINED)
    throw ValueError(
        "attribute '" + name + "' is " + AttributeProto::AttributeType_Name(a->type()) +
        ", expected " +
        AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type)));
  return *a;
}

namespace {
[[noreturn]] void missing(const std::string& name) {
  throw ValueError("required attribute '" + name + "' is missing");
}
}  // namespace

int64_t OpContext::attr_int(const std::string& name, std::optional<int64_t> def) {
  if (!find(name)) return def ? *def : (missing(name), 0);
  return get(name, AttributeProto::INT).i();
}

double OpContext::attr_float(const std::string& name, std::optional<double> def) {
  if (!find(name)) return def ? *def : (missing(name), 0);
  return get(name, AttributeProto::FLOAT).f();
}

std::string OpContext::attr_string(const std::string& name, std::optional<std::string> def) {
  if (!find(name)) return def ? *def : (missing(name), "");
  return get(name, AttributeProto::STRING).s();
}

std::vector<std::string> OpContext::attr_strings(const std::string& name,
                                                 std::optional<std::vector<std::string>> def) {
  if (!find(name)) return def ? *def : (missing(name), std::vector<std::string>{});
  const auto& a = get(name, AttributeProto::STRINGS);
  return std::vector<std::string>(a.strings().begin(), a.strings().end());
}

std::vector<int64_t> OpContext::attr_ints(const std::string& name,
                                          std::optional<std::vector<int64_t>> def) {
  if (!find(name)) return def ? *def : (missing(name), std::vector<int64_t>{});
  const auto& a = get(name, AttributeProto::INTS);
  return {a.ints().begin(), a.ints().end()};
}

std::vector<double> OpContext::attr_floats(const std::string& name,
                                           std::optional<std::vector<double>> def) {
  if (!find(name)) return def ? *def : (missing(name), std::vector<double>{});
  const auto& a = get(name, AttributeProto::FLOATS);
  return {a.floats().begin(), a.floats().end()};
}

Tensor OpContext::attr_tensor(const std::string& name) {
  if (!find(name)) missing(name);
  return to_tensor(get(name, AttributeProto::TENSOR).t(), base_dir_, "attribute '" + name + "'");
}

const ::onnx::GraphProto& OpContext::attr_graph(const std::string& name) {
  if (!find(name)) missing(name);
  return get(name, AttributeProto::GRAPH).g();
}

void OpContext::ignore_attr(std::initializer_list<const char*> names) {
  for (const char* n : names) used_.insert(n);
}

void OpContext::check_attributes_used() const {
  for (const auto& a : node.attribute())
    if (!used_.count(a.name()))
      throw UnsupportedError("attribute '" + a.name() + "' is not supported");
}

void OpContext::unsupported(const std::string& why) const { throw UnsupportedError(why); }
void OpContext::invalid(const std::string& why) const { throw ValueError(why); }

}  // namespace ember::onnx
