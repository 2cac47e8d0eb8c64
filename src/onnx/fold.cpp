// Load-time folding of an inference BatchNormalization into the Conv before it (the rewrite ONNX
// Runtime's ConvBNFusion also makes). BatchNormalization's inference output is (onnx/defs/nn,
// BatchNormalization) y = (x - mean) / sqrt(var + epsilon) * scale + B, per channel; on a
// convolution's output x = conv(X, W) + b that is conv(X, W * s) + (b - mean) * s + B with
// s = scale / sqrt(var + epsilon) per output channel (W's dim 0). The folded weights are computed
// in double and stored in the weights' dtype.
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ember/jit.h"
#include "model_impl.h"
#include "tensor_proto.h"

namespace ember::onnx {
namespace {

using Graph = ::onnx::GraphProto;
using Node = ::onnx::NodeProto;

bool default_domain(const Node& n) { return n.domain().empty() || n.domain() == "ai.onnx"; }

}  // namespace

void count_reads(const Graph& g, std::unordered_map<std::string, int>& reads) {
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) reads[i]++;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count_reads(a.g(), reads);
      for (const auto& sg : a.graphs()) count_reads(sg, reads);
    }
  }
  for (const auto& o : g.output()) reads[o.name()]++;
}

namespace {

const ::onnx::AttributeProto* attribute(const Node& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

struct Folder {
  Model::Impl& m;
  std::unordered_set<std::string> overridable;  // graph inputs: a caller may replace them
  std::unordered_set<std::string> names;        // every value name, for fresh ones
  std::unordered_map<std::string, int> reads;

  // The realized, contiguous initializer `name` of a float dtype, or an undefined tensor.
  Tensor constant(const std::string& name) const {
    if (name.empty() || overridable.count(name)) return {};
    auto it = m.initializers.find(name);
    if (it == m.initializers.end() || !it->second.error.empty() || !it->second.value.is_tensor())
      return {};
    Tensor t = it->second.value.tensor();
    if (t.dtype() != kFloat32 && t.dtype() != kFloat64) return {};
    return t.contiguous().realize();
  }

  std::string fresh(const std::string& base) {
    std::string s = base;
    while (names.count(s)) s += "_";
    names.insert(s);
    return s;
  }

  void add_initializer(const std::string& name, const Tensor& t) {
    auto* p = m.proto.mutable_graph()->add_initializer();
    p->set_name(name);  // the data lives in m.initializers, as for the file's initializers
    p->set_data_type(to_elem_type(t.dtype()));
    for (int64_t d : t.sizes()) p->add_dims(d);
    Initializer init;
    init.value = t;
    mark_static(t);
    m.initializers[name] = init;
  }

  // Whether `bn` is an inference BatchNormalization with per-channel constant statistics.
  bool foldable_bn(const Node& bn) const {
    if (!default_domain(bn) || bn.op_type() != "BatchNormalization" || bn.input_size() != 5)
      return false;
    for (int i = 1; i < bn.output_size(); i++)
      if (!bn.output(i).empty()) return false;  // running statistics asked for
    const auto* tm = attribute(bn, "training_mode");
    const auto* spatial = attribute(bn, "spatial");
    return !(tm && tm->i() != 0) && !(spatial && spatial->i() == 0);
  }

  // Writes the folded weights of `w` to `w_out` (which may be w's own memory) and returns the
  // folded bias (b: the conv's bias, undefined for none).
  template <typename T>
  static Tensor fold_values(const Tensor& w, void* w_out, const Tensor& b, const Tensor* stats,
                            double eps) {
    const int64_t C = w.size(0), per = w.numel() / C;
    const auto* wp = static_cast<const T*>(w.data_ptr());
    auto* out = static_cast<T*>(w_out);
    const auto* bp = b.defined() ? static_cast<const T*>(b.data_ptr()) : nullptr;
    const auto at = [&](int k, int64_t c) {
      return static_cast<double>(static_cast<const T*>(stats[k].data_ptr())[c]);
    };
    std::vector<T> b2(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; c++) {
      const double s = at(0, c) / std::sqrt(at(3, c) + eps);
      for (int64_t i = c * per; i < (c + 1) * per; i++)
        out[i] = static_cast<T>(static_cast<double>(wp[i]) * s);
      const double bias = bp ? static_cast<double>(bp[c]) : 0.0;
      b2[static_cast<size_t>(c)] = static_cast<T>((bias - at(2, c)) * s + at(1, c));
    }
    return from_blob(b2.data(), {C}, w.dtype());
  }

  // The folded weights and bias. When the conv is the weights' only reader, the weights are
  // rewritten in their own buffer (the initializer's alone: load made it), not copied.
  std::pair<Tensor, Tensor> folded(const std::string& w_name, const Tensor& w, const Tensor& b,
                                   const Tensor* stats, double eps) {
    const auto fold_into = [&](void* out) {
      return w.dtype() == kFloat32 ? fold_values<float>(w, out, b, stats, eps)
                                   : fold_values<double>(w, out, b, stats, eps);
    };
    Tensor b2;
    if (reads[w_name] == 1) {
      overwrite_in_place({w}, [&] { b2 = fold_into(w.data_ptr()); });
      return {w, b2};
    }
    std::vector<char> out(static_cast<size_t>(w.numel()) * element_size(w.dtype()));
    b2 = fold_into(out.data());
    return {from_blob(out.data(), w.sizes(), w.dtype()), b2};
  }

  // Folds `bn` into `conv` when both read constants and the conv's output feeds only the BN.
  bool fold(Node& conv, const Node& bn, std::vector<std::string>& dropped) {
    if (!default_domain(conv) || conv.op_type() != "Conv" || conv.output_size() != 1 ||
        reads[conv.output(0)] != 1 || !foldable_bn(bn))
      return false;
    Tensor w = constant(conv.input(1));
    if (!w.defined() || w.dim() < 3) return false;
    const int64_t C = w.size(0);
    Tensor stats[4];  // scale, B, mean, var
    for (int k = 0; k < 4; k++) {
      stats[k] = constant(bn.input(k + 1));
      if (!stats[k].defined() || stats[k].dtype() != w.dtype() || stats[k].dim() != 1 ||
          stats[k].size(0) != C)
        return false;
    }
    const bool has_bias = conv.input_size() > 2 && !conv.input(2).empty();
    const Tensor b = has_bias ? constant(conv.input(2)) : Tensor();
    if (has_bias && (!b.defined() || b.dtype() != w.dtype() || b.dim() != 1 || b.size(0) != C))
      return false;
    const auto* eps_attr = attribute(bn, "epsilon");
    const double eps = eps_attr ? eps_attr->f() : 1e-5;
    const auto [w2, b2] = folded(conv.input(1), w, b, stats, eps);
    for (int k = 1; k < 5; k++) dropped.push_back(bn.input(k));
    dropped.push_back(conv.input(1));
    if (has_bias) dropped.push_back(conv.input(2));
    const std::string wn = fresh(conv.input(1) + "_bn_folded"),
                      bname = fresh(bn.output(0) + "_bias_bn_folded");
    add_initializer(wn, w2);
    add_initializer(bname, b2);
    conv.set_input(1, wn);
    if (has_bias)
      conv.set_input(2, bname);
    else
      conv.add_input(bname);
    conv.set_output(0, bn.output(0));
    return true;
  }
};

}  // namespace

int fold_batch_norms(Model::Impl& m) {
  Graph& g = *m.proto.mutable_graph();
  Folder f{m, {}, {}, {}};
  for (const auto& i : g.input()) {
    f.overridable.insert(i.name());
    f.names.insert(i.name());
  }
  for (const auto& [name, init] : m.initializers) f.names.insert(name);
  for (const auto& n : g.node())
    for (const auto& o : n.output()) f.names.insert(o);
  count_reads(g, f.reads);
  // The producer of each value, to find the Conv before a BatchNormalization.
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); i++)
    for (const auto& o : g.node(i).output()) producer[o] = i;
  std::vector<bool> removed(static_cast<size_t>(g.node_size()), false);
  std::vector<std::string> dropped;
  int folded = 0;
  for (int i = 0; i < g.node_size(); i++) {
    const Node& bn = g.node(i);
    if (bn.op_type() != "BatchNormalization" || bn.input_size() < 1) continue;
    auto p = producer.find(bn.input(0));
    if (p == producer.end()) continue;
    if (f.fold(*g.mutable_node(p->second), bn, dropped)) {
      removed[static_cast<size_t>(i)] = true;
      folded++;
    }
  }
  if (!folded) return 0;
  ::google::protobuf::RepeatedPtrField<Node> kept;
  for (int i = 0; i < g.node_size(); i++)
    if (!removed[static_cast<size_t>(i)]) kept.Add()->Swap(g.mutable_node(i));
  g.mutable_node()->Swap(&kept);
  // Initializers that only the folded nodes read are released.
  std::unordered_map<std::string, int> reads;
  count_reads(g, reads);
  std::unordered_set<std::string> unused;
  for (const auto& name : dropped)
    if (!reads.count(name) && !f.overridable.count(name)) unused.insert(name);
  for (const auto& name : unused) m.initializers.erase(name);
  auto* inits = g.mutable_initializer();
  for (int i = inits->size(); i-- > 0;)
    if (unused.count(inits->Get(i).name())) inits->DeleteSubrange(i, 1);
  return folded;
}

}  // namespace ember::onnx
