// Sequences and optionals (ember/onnx/value.h): SequenceEmpty, SequenceConstruct, SequenceInsert,
// SequenceAt, SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap,
// Optional, OptionalHasElement, OptionalGetElement, and Identity of any value.
#include "common.h"

namespace ember::onnx::ops {
namespace {

// A sequence position in [-n, n) (or [-n, n] when inserting) as an index.
size_t position(OpContext& c, size_t input, int64_t n, bool insert) {
  int64_t p = c.ints_of(input).at(0);
  const int64_t hi = insert ? n : n - 1;
  if (p < -n || p > hi)
    throw IndexError("position " + std::to_string(p) + " is out of range for a sequence of " +
                     std::to_string(n));
  return static_cast<size_t>(p < 0 ? p + n : p);
}

}  // namespace

std::vector<Value> sequence_empty(OpContext& c) {
  c.ignore_attr({"dtype"});  // an empty sequence holds no element to have the type
  return {Value::sequence({})};
}

std::vector<Value> sequence_construct(OpContext& c) { return {Value::sequence(c.tensors())}; }

std::vector<Value> sequence_insert(OpContext& c) {
  std::vector<Tensor> items = c.value(0).items();
  const int64_t n = static_cast<int64_t>(items.size());
  const size_t at = c.has(2) ? position(c, 2, n, true) : items.size();
  items.insert(items.begin() + static_cast<long>(at), c.in(1));
  return {Value::sequence(items)};
}

std::vector<Value> sequence_at(OpContext& c) {
  const auto& items = c.value(0).items();
  return {items[position(c, 1, static_cast<int64_t>(items.size()), false)]};
}

std::vector<Value> sequence_erase(OpContext& c) {
  std::vector<Tensor> items = c.value(0).items();
  const int64_t n = static_cast<int64_t>(items.size());
  const size_t at = c.has(1) ? position(c, 1, n, false) : static_cast<size_t>(n - 1);
  if (n == 0) throw IndexError("cannot erase from an empty sequence");
  items.erase(items.begin() + static_cast<long>(at));
  return {Value::sequence(items)};
}

std::vector<Value> sequence_length(OpContext& c) {
  return {full({}, static_cast<int64_t>(c.value(0).items().size()), kInt64)};
}

// SplitToSequence: by `split` (a scalar chunk size, the last chunk shorter, or 1-d sizes), or
// into size-1 pieces (squeezed unless keepdims = 1) when split is absent.
std::vector<Value> split_to_sequence(OpContext& c) {
  const Tensor& x = c.in(0);
  const int64_t a = axis(c.attr_int("axis", 0), x.dim());
  const bool keep = c.attr_int("keepdims", 1) != 0;
  std::vector<Tensor> out;
  if (!c.has(1)) {
    for (int64_t i = 0; i < x.size(a); i++)
      out.push_back(keep ? x.narrow(a, i, 1) : x.select(a, i));
    return {Value::sequence(out)};
  }
  const auto split = c.ints_of(1);
  std::vector<int64_t> sizes = split;
  if (c.in(1).dim() == 0) {
    sizes.clear();
    for (int64_t at = 0; at < x.size(a); at += split.at(0))
      sizes.push_back(std::min(split[0], x.size(a) - at));
  }
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(x.narrow(a, at, s));
    at += s;
  }
  if (at != x.size(a)) throw ShapeError("split sizes do not cover the axis");
  return {Value::sequence(out)};
}

std::vector<Value> concat_from_sequence(OpContext& c) {
  const auto& items = c.value(0).items();
  if (items.empty()) throw ValueError("cannot concatenate an empty sequence");
  const bool new_axis = c.attr_int("new_axis", 0) != 0;
  const int64_t a = axis(c.attr_int("axis"), items[0].dim() + (new_axis ? 1 : 0));
  return {new_axis ? stack(items, a) : cat(items, a)};
}

// SequenceMap: the body on the i-th item of each sequence input (a tensor input as it is).
std::vector<Value> sequence_map(OpContext& c) {
  const auto& body = c.attr_graph("body");
  const size_t n = c.value(0).items().size();
  std::vector<std::vector<Tensor>> outs(static_cast<size_t>(body.output_size()));
  for (size_t i = 0; i < n; i++) {
    std::vector<Value> args;
    for (size_t k = 0; k < c.num_inputs(); k++) {
      const Value& v = c.value(k);
      if (v.is_tensor()) {
        args.push_back(v);
        continue;
      }
      if (v.items().size() != n) throw ShapeError("the input sequences have different lengths");
      args.push_back(v.items()[i]);
    }
    auto r = c.run_subgraph(body, args);
    for (size_t j = 0; j < r.size(); j++) outs[j].push_back(r[j].tensor());
  }
  std::vector<Value> result;
  for (auto& o : outs) result.push_back(Value::sequence(o));
  return result;
}

std::vector<Value> optional(OpContext& c) {
  c.ignore_attr({"type"});
  return {c.has(0) ? Value::some(c.value(0)) : Value::none()};
}

std::vector<Value> optional_has_element(OpContext& c) {
  const bool has =
      c.has(0) && (c.value(0).kind() != Value::Kind::Optional || c.value(0).has_element());
  return {full({}, has, kBool)};
}

std::vector<Value> optional_get_element(OpContext& c) {
  const Value& v = c.value(0);
  return {v.kind() == Value::Kind::Optional ? v.element() : v};
}

std::vector<Value> identity(OpContext& c) { return {c.value(0)}; }

}  // namespace ember::onnx::ops
