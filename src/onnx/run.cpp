// Running a graph: bind inputs (checked against the declarations) and initializers, build each
// node's ember ops in order (ONNX requires nodes in topological order; the checker enforces it),
// and name the node in every error raised while it is built.
#include <exception>
#include <map>
#include <optional>
#include <unordered_set>

#include "ember/context.h"
#include "ember/jit.h"
#include "ember/support/shape_str.h"
#include "model_impl.h"
#include "registry.h"
#include "shape_math.h"
#include "tensor_proto.h"

namespace ember::onnx {

struct Scope {
  ValueMap values;
  std::unordered_set<std::string> constants;  // names of values bound to the model's constants
  std::unordered_set<std::string> stored;     // pooled values to store (stored_pools)
  const Scope* parent = nullptr;
  const NodeObserver* observe = nullptr;
  const Value* find(const std::string& name) const {
    const Scope* s = owner(name);
    return s ? &s->values.at(name) : nullptr;
  }
  bool is_constant(const std::string& name) const {
    const Scope* s = owner(name);
    return s && s->constants.count(name);
  }

 private:
  // The nearest scope that binds name (an inner binding hides an outer one).
  const Scope* owner(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent)
      if (s->values.count(name)) return s;
    return nullptr;
  }
};

namespace {

// Throws `message` as the first of the types that e is (list a derived type before its base),
// else as Error.
template <class First, class... Rest>
[[noreturn]] void throw_as(const std::exception& e, const std::string& message) {
  if (dynamic_cast<const First*>(&e)) throw First(message);
  if constexpr (sizeof...(Rest) > 0) throw_as<Rest...>(e, message);
  throw Error(message);
}

// Re-raises the active exception with `prefix` in front of its message, keeping its type.
[[noreturn]] void rethrow_with(const std::string& prefix) {
  try {
    throw;
  } catch (const std::exception& e) {
    throw_as<UnsupportedError, ShapeError, DTypeError, IndexError, ValueError, IOError,
             CompileError>(e, prefix + e.what());
  }
}

std::string node_label(const ::onnx::NodeProto& n, int index, int64_t opset) {
  std::string s = "node " + std::to_string(index);
  if (!n.name().empty()) s += " '" + n.name() + "'";
  s += " (" + (n.domain().empty() ? "" : n.domain() + ":") + n.op_type();
  if (opset > 0) s += "-" + std::to_string(opset);
  return s + "): ";
}

void run_node(const Model::Impl& m, const ::onnx::GraphProto& g, int index, Scope& scope,
              const ValueMap& initial);

// The value `name` computed again by nodes [0, end) of g from its initial bindings, some replaced.
Tensor recompute(const Model::Impl& m, const ::onnx::GraphProto& g, int end, const Scope& scope,
                 const ValueMap& initial, const std::string& name,
                 const std::unordered_map<std::string, Tensor>& replaced) {
  Scope s;
  s.parent = scope.parent;
  s.values = initial;
  for (const auto& [k, v] : replaced) s.values[k] = v;
  const auto start = s.values;
  for (int i = 0; i < end; i++) {
    bool overridden = false;  // a node whose outputs are replaced is not run
    for (const auto& o : g.node(i).output()) overridden |= replaced.count(o) > 0;
    if (!overridden) run_node(m, g, i, s, start);
  }
  const Value* t = s.find(name);
  if (!t) throw ValueError("'" + name + "' is not computed before the node");
  return t->tensor();
}

// The outputs of pooling nodes that several nodes read. Built lazily, a pool's output is computed
// again by each kernel that reads it, a window of loads per element each time (ResNet's max pool
// after the stem feeds the first block's convolution and its residual add, or its downsample).
// Stored, it is computed once: ResNet-18 at 1 thread, batch 1 44.4 -> 40.9 ms, batch 8 374 -> 349
// ms (Xeon with AMX, AVX-512; ember onnx run, medians of 10, two alternations). Storing every
// value read twice gained no more there and moved the other networks by -4% to +8%, within their
// noise, so only pools are stored.
std::unordered_set<std::string> stored_pools(const ::onnx::GraphProto& g) {
  std::unordered_map<std::string, int> reads;
  count_reads(g, reads);
  std::unordered_set<std::string> out;
  for (const auto& n : g.node())
    if (n.op_type() == "MaxPool" || n.op_type() == "AveragePool" || n.op_type() == "LpPool")
      for (const auto& o : n.output())
        if (!o.empty() && reads[o] > 1) out.insert(o);
  return out;
}

void run_node(const Model::Impl& m, const ::onnx::GraphProto& g, int index, Scope& scope,
              const ValueMap& initial) {
  const ::onnx::NodeProto& n = g.node(index);
  int64_t opset = 0;
  try {
    opset = opset_of(m, n.domain());
    const OpEntry* op = find_op(n.domain(), n.op_type());
    if (!op)
      throw UnsupportedError("op " + n.op_type() + " is not supported" +
                             (n.domain().empty() || n.domain() == "ai.onnx"
                                  ? std::string()
                                  : " (domain '" + n.domain() + "')"));
    std::vector<Value> in;
    std::vector<bool> constant;
    for (const auto& name : n.input()) {
      constant.push_back(!name.empty() && scope.is_constant(name));
      if (name.empty()) {
        in.emplace_back();
        continue;
      }
      const Value* t = scope.find(name);
      if (!t) {
        auto init = m.initializers.find(name);
        if (init != m.initializers.end() && !init->second.error.empty())
          throw UnsupportedError(init->second.error);
        throw ValueError("input '" + name + "' is not defined before the node");
      }
      in.push_back(*t);
    }
    SubgraphRunner sub = [&m, &scope](const ::onnx::GraphProto& g, const std::vector<Value>& args) {
      if (args.size() != static_cast<size_t>(g.input_size()))
        throw ValueError("sub-graph '" + g.name() + "' takes " + std::to_string(g.input_size()) +
                         " inputs, given " + std::to_string(args.size()));
      ValueMap given;
      for (int i = 0; i < g.input_size(); i++) given[g.input(i).name()] = args[i];
      return run_graph(m, g, given, &scope);
    };
    const bool fixed = outputs_constant(n, constant), on_host = fixed && small_values(in);
    OpContext ctx(n, opset, std::move(in), sub, m.base_dir);
    ctx.set_constant_inputs(std::move(constant));
    ctx.recompute = [&](const std::string& name, const std::unordered_map<std::string, Tensor>& r) {
      return recompute(m, g, index, scope, initial, name, r);
    };
    std::vector<Value> out;
    {
      std::optional<DeviceGuard> interp;  // shape arithmetic compiles no kernels (shape_math.h)
      if (on_host) interp.emplace("interp");
      if (op->fn) {
        for (Tensor& t : op->fn(ctx)) out.emplace_back(std::move(t));
      } else {
        out = op->value_fn(ctx);
      }
    }
    ctx.check_attributes_used();
    if (on_host) to_host_data(out);
    for (size_t i = 0; i < ctx.num_outputs(); i++) {
      if (!ctx.wants_output(i)) continue;
      if (i >= out.size() || (out[i].is_tensor() && !out[i].tensor().defined()))
        throw UnsupportedError("output " + std::to_string(i) + " ('" + n.output(i) +
                               "') is not produced");
      if (!fixed && out[i].is_tensor() && scope.stored.count(n.output(i)))
        out[i] = Value(out[i].tensor().contiguous());
      scope.values[n.output(i)] = out[i];
      if (fixed)
        scope.constants.insert(n.output(i));
      else
        scope.constants.erase(n.output(i));
    }
    if (scope.observe) {
      out.resize(ctx.num_outputs());
      (*scope.observe)(index, out);
    }
  } catch (...) {
    rethrow_with(node_label(n, index, opset));
  }
}

}  // namespace

std::vector<Value> run_graph(const Model::Impl& m, const ::onnx::GraphProto& g,
                             const ValueMap& given, const Scope* outer,
                             const NodeObserver* observe) {
  Scope scope;
  scope.parent = outer;
  scope.observe = observe;
  scope.stored = stored_pools(g);
  const bool main = outer == nullptr;
  for (const auto& p : g.initializer()) {
    if (given.count(p.name())) continue;
    if (main) {
      const Initializer& init = m.initializers.at(p.name());
      if (init.error.empty()) scope.values[p.name()] = init.value;
    } else {
      Initializer init = make_initializer(p, m.base_dir);
      if (!init.error.empty()) throw UnsupportedError(init.error);
      scope.values[p.name()] = init.value;
    }
    scope.constants.insert(p.name());
  }
  for (const auto& [name, t] : given) scope.values[name] = t;
  const auto initial = scope.values;
  for (int i = 0; i < g.node_size(); i++) run_node(m, g, i, scope, initial);
  std::vector<Value> out;
  for (const auto& o : g.output()) {
    const Value* t = scope.find(o.name());
    if (!t) throw ValueError("graph output '" + o.name() + "' is never computed");
    out.push_back(*t);
  }
  return out;
}

namespace {

// A given tensor's shape against the input's declaration: rank, fixed dims, and symbolic dims
// consistent across inputs (`N` is one size).
void check_shape(const ValueInfo& info, const Shape& sizes,
                 std::map<std::string, int64_t>& symbols) {
  const std::string what = "input '" + info.name + "'";
  if (!info.shape) return;
  const auto& dims = *info.shape;
  std::string declared = "[";
  for (size_t i = 0; i < dims.size(); i++)
    declared += (i ? ", " : "") + (dims[i].value           ? std::to_string(*dims[i].value)
                                   : dims[i].param.empty() ? std::string("?")
                                                           : dims[i].param);
  declared += "]";
  auto fail = [&] {
    throw ShapeError(what + ": expected shape " + declared + ", got " + support::shape_str(sizes));
  };
  if (dims.size() != sizes.size()) fail();
  for (size_t i = 0; i < dims.size(); i++) {
    const int64_t got = sizes[i];
    if (dims[i].value && *dims[i].value != got) fail();
    if (!dims[i].value && !dims[i].param.empty()) {
      auto [it, fresh] = symbols.emplace(dims[i].param, got);
      if (!fresh && it->second != got)
        throw ShapeError(what + ": dimension '" + dims[i].param + "' is " + std::to_string(got) +
                         " here but " + std::to_string(it->second) + " in an earlier input");
    }
  }
}

// A value against its declaration: its kind (tensor, sequence, optional), then a tensor's or a
// string tensor's element type and shape.
void check_input(const ValueInfo& info, const Value& v, std::map<std::string, int64_t>& symbols) {
  const std::string what = "input '" + info.name + "'";
  const char* kind = info.type.rfind("tensor(", 0) == 0     ? "tensor"
                     : info.type.rfind("seq(", 0) == 0      ? "sequence"
                     : info.type.rfind("optional(", 0) == 0 ? "optional"
                                                            : nullptr;
  if (!kind) throw UnsupportedError(what + " is a " + info.type + " value, which ember lacks");
  if ((v.is_strings() ? "tensor" : v.kind_name()) != kind)
    throw ValueError(what + ": expected a " + info.type + " value, got a " + v.kind_name());
  if (v.is_strings()) {
    if (info.elem_type != ::onnx::TensorProto::STRING)
      throw DTypeError(what + ": expected " + info.type + ", got a string tensor");
    check_shape(info, v.strings().shape, symbols);
  } else if (v.is_tensor()) {
    const Tensor& t = v.tensor();
    if (info.elem_type == ::onnx::TensorProto::STRING)
      throw DTypeError(what + ": expected tensor(string), got " + dtype_name(t.dtype()));
    const ScalarType want = require_dtype(info.elem_type, what);
    if (t.dtype() != want)
      throw DTypeError(what + ": expected " + info.type + ", got " + dtype_name(t.dtype()));
    check_shape(info, t.shape(), symbols);
  }
}

NamedValues run_checked(const Model::Impl& m, const NamedValues& inputs,
                        const NodeObserver* observe) {
  ValueMap given;
  for (const auto& [name, v] : inputs) {
    bool known = false;
    for (const auto& i : m.inputs) known |= i.name == name;
    if (!known) {
      std::string names;
      for (const auto& i : m.inputs) names += (names.empty() ? "" : ", ") + i.name;
      throw ValueError("the model has no input '" + name + "' (its inputs: " + names + ")");
    }
    if (!given.emplace(name, v).second) throw ValueError("input '" + name + "' is given twice");
  }
  std::map<std::string, int64_t> symbols;
  for (const auto& info : m.inputs) {
    auto it = given.find(info.name);
    if (it != given.end()) {
      check_input(info, it->second, symbols);
    } else if (!info.has_default) {
      throw ValueError("input '" + info.name + "' (" + info.type + ") is required");
    }
  }
  // The graph's host data (Constant nodes, Shape's sizes, the values of sizes read from static
  // tensors) is what the input signature and the model fix: an ember::jit capture may take it in.
  StaticData fixed;
  std::vector<Value> out = run_graph(m, m.proto.graph(), given, nullptr, observe);
  NamedValues r;
  for (size_t i = 0; i < out.size(); i++) r.emplace_back(m.outputs[i].name, out[i]);
  return r;
}

NamedTensors tensors_of(const NamedValues& values) {
  NamedTensors r;
  for (auto& [name, v] : values) {
    if (!v.is_tensor())
      throw ValueError("output '" + name + "' is a " + v.kind_name() + ": use run_values");
    r.emplace_back(name, v.tensor());
  }
  return r;
}

}  // namespace

NamedValues Model::run_values(const NamedValues& inputs) const {
  return run_checked(*impl_, inputs, nullptr);
}

NamedTensors Model::run(const NamedTensors& inputs) const {
  return tensors_of(run_checked(*impl_, NamedValues(inputs.begin(), inputs.end()), nullptr));
}

NamedTensors Model::run(const NamedTensors& inputs, const NodeObserver& observe) const {
  return tensors_of(run_checked(*impl_, NamedValues(inputs.begin(), inputs.end()), &observe));
}

std::vector<Tensor> Model::operator()(const std::vector<Tensor>& inputs) const {
  if (inputs.size() > impl_->inputs.size())
    throw ValueError("the model takes " + std::to_string(impl_->inputs.size()) + " inputs, given " +
                     std::to_string(inputs.size()));
  NamedTensors named;
  for (size_t i = 0; i < inputs.size(); i++) named.emplace_back(impl_->inputs[i].name, inputs[i]);
  std::vector<Tensor> out;
  for (auto& [name, t] : run(named)) out.push_back(t);
  return out;
}

}  // namespace ember::onnx
