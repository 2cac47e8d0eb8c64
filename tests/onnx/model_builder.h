// Small ONNX models built in code with ONNX's protobuf classes, for the loader tests.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace onnx_test {

// The element types the tests name (onnx.proto's TensorProto::DataType).
constexpr int kF32 = ::onnx::TensorProto::FLOAT;
constexpr int kF16 = ::onnx::TensorProto::FLOAT16;
constexpr int kI64 = ::onnx::TensorProto::INT64;
constexpr int kU8 = ::onnx::TensorProto::UINT8;
constexpr int kStr = ::onnx::TensorProto::STRING;

struct Io {
  std::string name;
  int elem_type = ::onnx::TensorProto::FLOAT;
  std::vector<int64_t> dims;  // -1: a symbolic dim named "N"; -k (k > 1): one named "dk"
  bool shaped = true;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 13) {
    m_.set_ir_version(opset >= 13 ? 7 : opset >= 9 ? 4 : 3);
    m_.set_producer_name("ember-tests");
    auto* o = m_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    m_.mutable_graph()->set_name("g");
  }
  ModelBuilder& input(const Io& io) {
    fill(m_.mutable_graph()->add_input(), io);
    return *this;
  }
  ModelBuilder& output(const Io& io) {
    fill(m_.mutable_graph()->add_output(), io);
    return *this;
  }
  ::onnx::NodeProto& node(const std::string& op, std::initializer_list<std::string> in,
                          std::initializer_list<std::string> out, const std::string& name = "") {
    auto* n = m_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& s : in) n->add_input(s);
    for (auto& s : out) n->add_output(s);
    return *n;
  }
  ::onnx::TensorProto& initializer(const std::string& name, const std::vector<float>& v,
                                   const std::vector<int64_t>& dims) {
    auto* t = m_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    t->set_raw_data(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
    return *t;
  }
  ::onnx::ModelProto& proto() { return m_; }
  std::string bytes() const { return m_.SerializeAsString(); }

  static void attr_int(::onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_ints(::onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr_string(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(v);
  }

 private:
  static void fill(::onnx::ValueInfoProto* v, const Io& io) {
    v->set_name(io.name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(io.elem_type);
    if (!io.shaped) return;
    auto* s = tt->mutable_shape();
    for (auto d : io.dims) {
      auto* dim = s->add_dim();
      if (d < 0)
        dim->set_dim_param(d == -1 ? "N" : 'd' + std::to_string(-d));
      else
        dim->set_dim_value(d);
    }
  }
  ::onnx::ModelProto m_;
};

}  // namespace onnx_test
