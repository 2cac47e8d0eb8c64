#include "ir/view.h"

#include <algorithm>

namespace ember::ir {

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> st(shape.size(), 0);
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = shape[i] == 1 ? 0 : acc;
    acc *= shape[i];
  }
  return st;
}

View View::contiguous(const Shape& shape) { return View{shape, contiguous_strides(shape), 0, {}}; }

bool View::is_contiguous() const {
  return offset == 0 && mask.empty() && strides == contiguous_strides(shape);
}

namespace {

// Strides for viewing a mask-free strided layout with a new shape (PyTorch's view rule: each run of
// dims that is contiguous in memory may be split or merged freely).
std::optional<std::vector<int64_t>> reshape_strides(const Shape& old_shape,
                                                    const std::vector<int64_t>& old_strides,
                                                    const Shape& new_shape) {
  std::vector<int64_t> ns(new_shape.size(), 0);
  if (shape_numel(old_shape) == 0 || old_shape.empty()) {
    if (shape_numel(old_shape) == 0) return contiguous_strides(new_shape);
    return ns;  // 0-d -> all size-1 dims
  }
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; d--) {
    tensor_numel *= old_shape[d];
    if (d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        ns[view_d] = view_numel * chunk_base;
        view_numel *= new_shape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  for (size_t i = 0; i < new_shape.size(); i++)
    if (new_shape[i] == 1) ns[i] = 0;
  return ns;
}

}  // namespace

std::optional<View> View::reshape(const Shape& new_shape) const {
  if (new_shape == shape) return *this;
  if (mask.empty()) {
    auto st = reshape_strides(shape, strides, new_shape);
    if (!st) return std::nullopt;
    return View{new_shape, *st, offset, {}};
  }
  // Masked: only inserting or removing size-1 dims keeps one view.
  std::vector<size_t> old_dims, new_dims;
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] != 1) old_dims.push_back(i);
  for (size_t i = 0; i < new_shape.size(); i++)
    if (new_shape[i] != 1) new_dims.push_back(i);
  if (old_dims.size() != new_dims.size()) return std::nullopt;
  for (size_t k = 0; k < old_dims.size(); k++)
    if (shape[old_dims[k]] != new_shape[new_dims[k]]) return std::nullopt;
  // A size-1 dim whose mask excludes its one element makes the whole view empty-valid.
  bool all_invalid = false;
  for (size_t i = 0; i < shape.size(); i++)
    if (shape[i] == 1 && mask[i].first >= mask[i].second) all_invalid = true;
  View v{new_shape, std::vector<int64_t>(new_shape.size(), 0), offset, {}};
  v.mask.assign(new_shape.size(), {0, 1});
  for (size_t k = 0; k < old_dims.size(); k++) {
    v.strides[new_dims[k]] = strides[old_dims[k]];
    v.mask[new_dims[k]] = mask[old_dims[k]];
  }
  if (all_invalid && !new_shape.empty()) v.mask[0] = {0, 0};
  if (all_invalid && new_shape.empty()) return std::nullopt;
  return v;
}

View View::permute(const std::vector<int64_t>& order) const {
  View v;
  v.offset = offset;
  for (auto o : order) {
    v.shape.push_back(shape[o]);
    v.strides.push_back(strides[o]);
    if (!mask.empty()) v.mask.push_back(mask[o]);
  }
  return v;
}

View View::expand(const Shape& new_shape) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); i++) {
    if (shape[i] == new_shape[i]) continue;
    v.shape[i] = new_shape[i];
    v.strides[i] = 0;
    if (!mask.empty())
      v.mask[i] = mask[i].first < mask[i].second ? std::pair<int64_t, int64_t>{0, new_shape[i]}
                                                 : std::pair<int64_t, int64_t>{0, 0};
  }
  return v;
}

View View::pad(const std::vector<int64_t>& pads) const {
  View v = *this;
  if (v.mask.empty())
    for (auto d : shape) v.mask.push_back({0, d});
  for (size_t i = 0; i < shape.size(); i++) {
    int64_t b = pads[2 * i], a = pads[2 * i + 1];
    v.offset -= b * strides[i];
    v.shape[i] = shape[i] + b + a;
    v.mask[i] = {mask.empty() ? b : mask[i].first + b,
                 (mask.empty() ? shape[i] : mask[i].second) + b};
  }
  return v;
}

View View::shrink(const std::vector<int64_t>& bounds) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); i++) {
    int64_t s = bounds[2 * i], e = bounds[2 * i + 1];
    v.offset += s * strides[i];
    v.shape[i] = e - s;
    if (!mask.empty()) {
      int64_t lo = std::clamp<int64_t>(mask[i].first - s, 0, e - s);
      int64_t hi = std::clamp<int64_t>(mask[i].second - s, 0, e - s);
      v.mask[i] = {lo, std::max(lo, hi)};
    }
  }
  // Drop a mask that no longer excludes anything.
  bool full = true;
  for (size_t i = 0; i < v.mask.size(); i++)
    if (v.mask[i].first != 0 || v.mask[i].second != v.shape[i]) full = false;
  if (full) v.mask.clear();
  return v;
}

View View::flip(const std::vector<int64_t>& flags) const {
  View v = *this;
  for (size_t i = 0; i < shape.size(); i++) {
    if (!flags[i]) continue;
    v.offset += (shape[i] - 1) * strides[i];
    v.strides[i] = -strides[i];
    if (!mask.empty()) v.mask[i] = {shape[i] - mask[i].second, shape[i] - mask[i].first};
  }
  return v;
}

std::optional<View> View::apply(const Node& m) const {
  switch (m.op) {
    case Op::RESHAPE:
      return reshape(m.arg.ints);
    case Op::PERMUTE:
      return permute(m.arg.ints);
    case Op::EXPAND:
      return expand(m.arg.ints);
    case Op::PAD:
      return pad(m.arg.ints);
    case Op::SHRINK:
      return shrink(m.arg.ints);
    case Op::FLIP:
      return flip(m.arg.ints);
    default:
      return std::nullopt;
  }
}

}  // namespace ember::ir
