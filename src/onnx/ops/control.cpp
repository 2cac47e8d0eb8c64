// Control flow: If, Loop, Scan. Conditions and trip counts are read on the host, and each
// iteration's body builds ember ops again (the graph is unrolled); the values stay lazy.
#include <algorithm>
#include <limits>

#include "common.h"
#include "ember/support/shape_str.h"

namespace ember::onnx::ops {
namespace {

bool host_bool(const Tensor& t, const char* what) {
  if (t.numel() != 1)
    throw ShapeError(std::string(what) + " must hold one element, got " +
                     support::shape_str(t.sizes()));
  return t.to_vector<int64_t>()[0] != 0;
}

}  // namespace

std::vector<Value> if_op(OpContext& c) {
  const bool cond = host_bool(c.in(0), "If's condition");
  const auto& branch = c.attr_graph(cond ? "then_branch" : "else_branch");
  c.ignore_attr({cond ? "else_branch" : "then_branch"});
  return c.run_subgraph(branch, {});
}

namespace {

// Scan outputs: one tensor per step, stacked along a new leading axis.
Tensor stack_steps(const std::vector<Tensor>& steps, const std::string& what) {
  if (steps.empty()) throw UnsupportedError(what + " has no iterations: its shape is unknown");
  return stack(steps, 0);
}

}  // namespace

// Loop-carried values may be sequences and optionals; scan outputs are tensors.
std::vector<Value> loop(OpContext& c) {
  const auto& body = c.attr_graph("body");
  const int64_t max_trips = c.has(0) ? c.ints_of(0).at(0) : std::numeric_limits<int64_t>::max();
  bool cond = c.has(1) ? host_bool(c.in(1), "Loop's condition") : true;
  std::vector<Value> vars;
  for (size_t i = 2; i < c.num_inputs(); i++) vars.push_back(c.value(i));
  const size_t n = vars.size();
  const size_t n_scan = static_cast<size_t>(body.output_size()) - 1 - n;
  std::vector<std::vector<Tensor>> scans(n_scan);
  for (int64_t i = 0; i < max_trips && cond; i++) {
    std::vector<Value> args = {full({}, i, kInt64), full({}, cond, kBool)};
    args.insert(args.end(), vars.begin(), vars.end());
    std::vector<Value> out = c.run_subgraph(body, args);
    cond = host_bool(out.at(0).tensor(), "Loop body's condition");
    for (size_t j = 0; j < n; j++) vars[j] = out[1 + j];
    for (size_t j = 0; j < n_scan; j++) scans[j].push_back(out[1 + n + j].tensor());
    if (i > 10'000'000) throw ValueError("Loop runs more than 10^7 iterations");
  }
  for (size_t j = 0; j < n_scan; j++) vars.push_back(stack_steps(scans[j], "a Loop scan output"));
  return vars;
}

namespace {

// dim 0 of t moved to position a.
Tensor move_first_to(const Tensor& t, int64_t a) {
  std::vector<int64_t> order;
  for (int64_t i = 1; i <= a; i++) order.push_back(i);
  order.push_back(0);
  for (int64_t i = a + 1; i < t.dim(); i++) order.push_back(i);
  return t.permute(order);
}

struct ScanSpec {
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;
};

// body(states..., slices of the scan inputs) -> (states..., per-step outputs), for every index
// of each scan input's scan axis (reversed for direction 1); returns the final states and the
// stacked outputs.
std::vector<Tensor> run_scan(OpContext& c, const ::onnx::GraphProto& body,
                             std::vector<Tensor> states, const std::vector<Tensor>& inputs,
                             const ScanSpec& sp) {
  const size_t n = states.size(), m = inputs.size();
  const size_t k = static_cast<size_t>(body.output_size()) - n;
  int64_t steps = -1;
  std::vector<int64_t> ax(m);
  for (size_t j = 0; j < m; j++) {
    ax[j] = axis(sp.in_axes.at(j), inputs[j].dim());
    if (steps >= 0 && inputs[j].size(ax[j]) != steps)
      throw ShapeError("scan inputs have different lengths");
    steps = inputs[j].size(ax[j]);
  }
  std::vector<std::vector<Tensor>> outs(k);
  for (int64_t t = 0; t < steps; t++) {
    std::vector<Value> args(states.begin(), states.end());
    for (size_t j = 0; j < m; j++)
      args.push_back(inputs[j].select(ax[j], sp.in_dirs.at(j) ? steps - 1 - t : t));
    std::vector<Value> r = c.run_subgraph(body, args);
    for (size_t j = 0; j < n; j++) states[j] = r[j].tensor();
    for (size_t j = 0; j < k; j++) outs[j].push_back(r[n + j].tensor());
  }
  for (size_t j = 0; j < k; j++) {
    if (sp.out_dirs.at(j)) std::reverse(outs[j].begin(), outs[j].end());
    Tensor s = stack_steps(outs[j], "a Scan output");
    states.push_back(move_first_to(s, axis(sp.out_axes.at(j), s.dim())));
  }
  return states;
}

std::vector<int64_t> list_attr(OpContext& c, const char* name, size_t count) {
  auto v = c.attr_ints(name, std::vector<int64_t>(count, 0));
  if (v.size() != count)
    throw ValueError(std::string(name) + " needs " + std::to_string(count) + " entries");
  return v;
}

}  // namespace

// Scan-9+: states, then num_scan_inputs scan inputs. Scan-8: an optional sequence_lens first and
// a leading batch dim on every input, scanned along dim 1.
std::vector<Tensor> scan(OpContext& c) {
  const auto& body = c.attr_graph("body");
  const size_t m = static_cast<size_t>(c.attr_int("num_scan_inputs"));
  const size_t first = c.opset < 9 ? 1 : 0, total = c.num_inputs() - first, n = total - m;
  const size_t k = static_cast<size_t>(body.output_size()) - n;
  std::vector<Tensor> states, inputs;
  for (size_t i = 0; i < total; i++) (i < n ? states : inputs).push_back(c.in(first + i));
  ScanSpec sp;
  if (c.opset >= 9) {
    sp.in_axes = list_attr(c, "scan_input_axes", m);
    sp.in_dirs = list_attr(c, "scan_input_directions", m);
    sp.out_axes = list_attr(c, "scan_output_axes", k);
    sp.out_dirs = list_attr(c, "scan_output_directions", k);
    return run_scan(c, body, states, inputs, sp);
  }
  if (c.has(0)) throw UnsupportedError("Scan-8 with sequence_lens is not supported");
  sp.in_axes.assign(m, 0);
  sp.in_dirs = list_attr(c, "directions", m);
  sp.out_axes.assign(k, 0);
  sp.out_dirs.assign(k, 0);
  const int64_t batch = (states.empty() ? inputs : states).at(0).size(0);
  std::vector<std::vector<Tensor>> per(n + k);
  for (int64_t b = 0; b < batch; b++) {
    std::vector<Tensor> sb, ib;
    for (auto& s : states) sb.push_back(s.select(0, b));
    for (auto& x : inputs) ib.push_back(x.select(0, b));
    auto r = run_scan(c, body, sb, ib, sp);
    for (size_t j = 0; j < n + k; j++) per[j].push_back(r[j]);
  }
  std::vector<Tensor> out;
  for (auto& p : per) out.push_back(stack(p, 0));
  return out;
}

}  // namespace ember::onnx::ops
