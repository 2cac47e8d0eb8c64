// Padding modes as slices, flips and concatenation of the input along each padded dim.
#include "ember/padding.h"

#include <string>

namespace ember {

namespace {

// One dim: `before` and `after` elements (both >= 0) added in mode.
Tensor pad_dim(const Tensor& t, int64_t d, int64_t before, int64_t after, PadMode mode) {
  const int64_t n = t.size(d);
  const char* name = mode == PadMode::Reflect     ? "reflect"
                     : mode == PadMode::Replicate ? "replicate"
                                                  : "circular";
  if (n == 0)
    throw ValueError(std::string("pad: ") + name + " padding of an empty dim " + std::to_string(d));
  if (mode == PadMode::Reflect && (before >= n || after >= n))
    throw ValueError("pad: reflect padding (" + std::to_string(before) + ", " +
                     std::to_string(after) + ") must be smaller than dim " + std::to_string(d) +
                     "'s size " + std::to_string(n));
  if (mode == PadMode::Circular && (before > n || after > n))
    throw ValueError("pad: circular padding (" + std::to_string(before) + ", " +
                     std::to_string(after) + ") must be at most dim " + std::to_string(d) +
                     "'s size " + std::to_string(n));
  std::vector<Tensor> parts;
  auto edge = [&](int64_t at, int64_t count) {
    Shape s = t.shape();
    s[d] = count;
    return t.narrow(d, at, 1).expand(s);
  };
  if (before) {
    if (mode == PadMode::Reflect) parts.push_back(t.narrow(d, 1, before).flip({d}));
    if (mode == PadMode::Replicate) parts.push_back(edge(0, before));
    if (mode == PadMode::Circular) parts.push_back(t.narrow(d, n - before, before));
  }
  parts.push_back(t);
  if (after) {
    if (mode == PadMode::Reflect) parts.push_back(t.narrow(d, n - 1 - after, after).flip({d}));
    if (mode == PadMode::Replicate) parts.push_back(edge(n - 1, after));
    if (mode == PadMode::Circular) parts.push_back(t.narrow(d, 0, after));
  }
  return parts.size() == 1 ? t : cat(parts, d);
}

}  // namespace

Tensor pad(const Tensor& t, IntList p, PadMode mode, const Scalar& value) {
  if (mode == PadMode::Constant) return constant_pad_nd(t, p, value);
  if (p.size() % 2 || static_cast<int64_t>(p.size()) > 2 * t.dim())
    throw ValueError("pad: padding length " + std::to_string(p.size()) +
                     " must be even and at most twice the number of dims (" +
                     std::to_string(t.dim()) + ")");
  // Crop first (negative amounts), then pad what remains.
  IntList crop(p.size());
  for (size_t i = 0; i < p.size(); i++) crop[i] = std::min<int64_t>(p[i], 0);
  Tensor r = constant_pad_nd(t, crop);
  for (size_t i = 0; i < p.size() / 2; i++) {
    const int64_t d = t.dim() - 1 - static_cast<int64_t>(i);
    const int64_t before = std::max<int64_t>(p[2 * i], 0),
                  after = std::max<int64_t>(p[2 * i + 1], 0);
    if (before || after) r = pad_dim(r, d, before, after, mode);
  }
  return r;
}

}  // namespace ember
