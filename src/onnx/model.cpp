// load(): parse, check, infer shapes, convert initializers; the Model's descriptive accessors.
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/shape_inference/implementation.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <string_view>

#include "ember/jit.h"
#include "ember/support/mapped_file.h"
#include "ember/support/read_file.h"
#include "model_impl.h"
#include "registry.h"
#include "tensor_proto.h"

namespace ember::onnx {

namespace {

// Why a model the checker rejects may be valid after all: it imports a newer opset than the ONNX
// release ember reads with knows (ONNX 1.12: ai.onnx up to 17), whose checker then holds its nodes
// to the older definitions (ReduceMean-18 takes `axes` as an input, ReduceMean-13 as an
// attribute). "" when every imported opset is known.
std::string newer_opset_hint(const ::onnx::ModelProto& proto) {
  const auto& known = ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const auto& o : proto.opset_import()) {
    const std::string domain = o.domain().empty() ? "ai.onnx" : o.domain();
    auto it = known.find(o.domain() == "ai.onnx" ? "" : o.domain());
    if (it != known.end() && o.version() > it->second.second)
      return " (the model imports opset " + std::to_string(o.version()) + " of " + domain +
             "; ember knows opsets up to " + std::to_string(it->second.second) +
             ": export it with opset " + std::to_string(it->second.second) + " or lower)";
  }
  return "";
}

using support::read_file;

ValueInfo describe(const ::onnx::ValueInfoProto& v) {
  ValueInfo r;
  r.name = v.name();
  r.type = type_text(v.type());
  if (v.type().has_tensor_type()) {
    const auto& tt = v.type().tensor_type();
    r.elem_type = tt.elem_type();
    r.dtype = to_dtype(r.elem_type);
    if (tt.has_shape()) {
      std::vector<Dim> dims;
      for (const auto& d : tt.shape().dim()) {
        Dim x;
        if (d.has_dim_value()) x.value = d.dim_value();
        if (d.has_dim_param()) x.param = d.dim_param();
        dims.push_back(x);
      }
      r.shape = dims;
    }
  }
  return r;
}

// A node's op type as op_counts names it: "Conv", or "domain:Op" outside the default domain.
std::string op_key(const ::onnx::NodeProto& n) {
  const bool def = n.domain().empty() || n.domain() == "ai.onnx";
  return def ? n.op_type() : n.domain() + ":" + n.op_type();
}

// Op types of a graph and its sub-graphs (attributes of type GRAPH / GRAPHS).
void count_ops(const ::onnx::GraphProto& g, std::map<std::string, int64_t>& counts,
               std::map<std::string, bool>& known) {
  for (const auto& n : g.node()) {
    const std::string key = op_key(n);
    counts[key]++;
    known[key] = find_op(n.domain(), n.op_type()) != nullptr;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count_ops(a.g(), counts, known);
      for (const auto& sg : a.graphs()) count_ops(sg, counts, known);
    }
  }
}

// Parses the serialized model into m.proto (the caller frees the bytes afterwards).
void parse(Model::Impl& m, std::string_view bytes) {
  if (bytes.empty()) throw IOError(m.name + ": empty file, not an ONNX model");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw IOError(m.name +
                  ": larger than protobuf's 2 GiB limit (keep the weights in external "
                  "data files)");
  if (!m.proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw IOError(m.name + ": not a valid ONNX model (the protobuf is truncated or malformed)");
}

// Checks the parsed model, infers its shapes and converts its initializers.
std::shared_ptr<Model::Impl> build(std::shared_ptr<Model::Impl> m) {
  const std::string& name = m->name;
  const std::string& base_dir = m->base_dir;
  // External data is read into the message first: ONNX's checker looks for the files relative to
  // the process's working directory, not the model's (ONNX 1.12, check_model(ModelProto)).
  for (auto& p : *m->proto.mutable_graph()->mutable_initializer())
    if (p.data_location() == ::onnx::TensorProto::EXTERNAL) inline_external_data(p, base_dir, name);
  try {
    ::onnx::checker::check_model(m->proto);
  } catch (const std::exception& e) {
    throw IOError(name + ": the ONNX checker rejects the model: " + e.what() +
                  newer_opset_hint(m->proto));
  }
  try {
    ::onnx::shape_inference::InferShapes(m->proto);
  } catch (const std::exception& e) {
    throw IOError(name + ": ONNX shape inference fails: " + e.what());
  }
  for (const auto& o : m->proto.opset_import())
    m->opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  auto* g = m->proto.mutable_graph();
  if (g->sparse_initializer_size())
    throw UnsupportedError(name + ": sparse initializers are not supported");
  // The tensors take the weights' bytes from the message (no copy of the large ones).
  for (auto& p : *g->mutable_initializer()) m->initializers[p.name()] = take_initializer(p);
  for (const auto& v : g->input()) {
    ValueInfo info = describe(v);
    info.has_default = m->initializers.count(v.name()) > 0;
    m->inputs.push_back(info);
  }
  for (const auto& v : g->output()) m->outputs.push_back(describe(v));
  std::map<std::string, int64_t> counts;
  std::map<std::string, bool> known;
  count_ops(*g, counts, known);
  for (auto& [op, c] : counts) {
    m->op_counts.emplace_back(op, c);
    if (!known[op]) m->unsupported.push_back(op);
  }
  std::stable_sort(m->op_counts.begin(), m->op_counts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  fold_batch_norms(*m);  // after op_counts, which describe the file
#ifdef __GLIBC__
  // The copied weights' strings and the weights that folding replaced were freed inside glibc's
  // heap, which keeps those pages resident until it is trimmed.
  malloc_trim(0);
#endif
  return m;
}

std::shared_ptr<Model::Impl> new_impl(const std::string& base_dir, const std::string& name) {
  auto m = std::make_shared<Model::Impl>();
  m->name = name;
  m->base_dir = base_dir;
  return m;
}

}  // namespace

namespace {

// The initializer `convert` makes of a TensorProto (named in errors as `p`).
template <typename Convert>
Initializer initializer_of(const ::onnx::TensorProto& p, Convert convert) {
  Initializer r;
  try {
    r.value = convert("initializer '" + p.name() + "'");
    // The model's constants: a jit capture may read them (a Reshape's shape, a Clip's bounds).
    if (r.value.is_tensor()) mark_static(r.value.tensor());
  } catch (const UnsupportedError& e) {
    r.error = e.what();
  }
  return r;
}

}  // namespace

Initializer make_initializer(const ::onnx::TensorProto& p, const std::string& base_dir) {
  return initializer_of(p, [&](const std::string& what) { return to_value(p, base_dir, what); });
}

Initializer take_initializer(::onnx::TensorProto& p) {
  // External data is inline by now: no directory is needed.
  return initializer_of(p, [&](const std::string& what) { return take_value(p, ".", what); });
}

int64_t opset_of(const Model::Impl& m, const std::string& domain) {
  auto it = m.opsets.find(domain == "ai.onnx" ? "" : domain);
  if (it == m.opsets.end())
    throw UnsupportedError("the model imports no opset for domain '" + domain + "'");
  return it->second;
}

Model load(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  auto m = new_impl(dir.empty() ? "." : dir, "'" + path + "'");
  {
    // Parsed in place from the page cache; unmapped before the weights are converted.
    support::MappedFile file(path);
    parse(*m, file.bytes());
  }
  return Model(build(std::move(m)));
}

Model load_from_bytes(const std::string& bytes, const std::string& base_dir,
                      const std::string& name) {
  auto m = new_impl(base_dir, name);
  parse(*m, bytes);
  return Model(build(std::move(m)));
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }

std::vector<std::pair<std::string, int64_t>> Model::opsets() const {
  std::vector<std::pair<std::string, int64_t>> r;
  for (const auto& o : impl_->proto.opset_import())
    r.emplace_back(o.domain().empty() ? "ai.onnx" : o.domain(), o.version());
  return r;
}

std::vector<std::pair<std::string, int64_t>> Model::op_counts() const { return impl_->op_counts; }

std::vector<NodeInfo> Model::nodes() const {
  std::vector<NodeInfo> r;
  for (const auto& n : impl_->proto.graph().node()) {
    NodeInfo info;
    info.name = n.name();
    info.op_type = op_key(n);
    info.inputs.assign(n.input().begin(), n.input().end());
    info.outputs.assign(n.output().begin(), n.output().end());
    r.push_back(std::move(info));
  }
  return r;
}
std::vector<std::string> Model::unsupported_ops() const { return impl_->unsupported; }

std::string Model::producer() const {
  const auto& p = impl_->proto;
  return p.producer_version().empty() ? p.producer_name()
                                      : p.producer_name() + " " + p.producer_version();
}
int64_t Model::ir_version() const { return impl_->proto.ir_version(); }

Tensor load_tensor(const std::string& path) {
  ::onnx::TensorProto p;
  if (!p.ParseFromString(read_file(path)))
    throw IOError("'" + path + "': not a valid onnx.TensorProto (truncated or malformed)");
  std::string dir = std::filesystem::path(path).parent_path().string();
  return to_tensor(p, dir.empty() ? "." : dir, "'" + path + "'");
}

namespace {

Value sequence_value(const ::onnx::SequenceProto& p, const std::string& dir,
                     const std::string& what) {
  if (p.elem_type() != ::onnx::SequenceProto::TENSOR && p.tensor_values_size() == 0 &&
      p.elem_type() != ::onnx::SequenceProto::UNDEFINED)
    throw UnsupportedError(what + ": sequences of other than tensors are not supported");
  std::vector<Tensor> items;
  for (const auto& t : p.tensor_values()) items.push_back(to_tensor(t, dir, what));
  return Value::sequence(std::move(items));
}

}  // namespace

Value load_value(const std::string& path, const std::string& type) {
  const std::string what = "'" + path + "'";
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (type == "tensor(bfloat16)") {
    // ONNX 1.12's test generator writes bfloat16 data as their 16-bit words typed UINT16 (NumPy has
    // no bfloat16): the same bytes, read as the declared type.
    Tensor t = load_tensor(path);
    if (t.dtype() != kUInt16) return t;
    t = t.contiguous().realize();
    return from_blob(t.data_ptr(), t.sizes(), kBFloat16);
  }
  if (type == "tensor(string)") {
    ::onnx::TensorProto p;
    if (!p.ParseFromString(read_file(path)))
      throw IOError(what + ": not a valid onnx.TensorProto (truncated or malformed)");
    return to_value(p, dir, what);
  }
  if (type.rfind("tensor(", 0) == 0) return load_tensor(path);
  const std::string bytes = read_file(path);
  if (type.rfind("seq(tensor(", 0) == 0) {
    ::onnx::SequenceProto p;
    if (!p.ParseFromString(bytes)) throw IOError(what + ": not a valid onnx.SequenceProto");
    return sequence_value(p, dir, what);
  }
  if (type.rfind("optional(", 0) == 0) {
    ::onnx::OptionalProto p;
    if (!p.ParseFromString(bytes)) throw IOError(what + ": not a valid onnx.OptionalProto");
    if (p.has_tensor_value()) return Value::some(to_tensor(p.tensor_value(), dir, what));
    if (p.has_sequence_value()) return Value::some(sequence_value(p.sequence_value(), dir, what));
    if (p.elem_type() == ::onnx::OptionalProto::TENSOR ||
        p.elem_type() == ::onnx::OptionalProto::SEQUENCE ||
        p.elem_type() == ::onnx::OptionalProto::UNDEFINED)
      return Value::none();
    throw UnsupportedError(what + ": an optional of other than a tensor or a sequence");
  }
  throw UnsupportedError(what + ": a " + type + " value, which ember lacks");
}

TensorFileInfo tensor_file_info(const std::string& path) {
  ::onnx::TensorProto p;
  if (!p.ParseFromString(read_file(path)))
    throw IOError("'" + path + "': not a valid onnx.TensorProto (truncated or malformed)");
  TensorFileInfo r;
  r.elem_type = p.data_type();
  r.type = "tensor(" + elem_type_name(p.data_type()) + ")";
  r.shape.assign(p.dims().begin(), p.dims().end());
  return r;
}

}  // namespace ember::onnx
