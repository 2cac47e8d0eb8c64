// View: how a node's index space maps onto a buffer (docs/design.md principle 3: movement ops are
// index arithmetic). element(i0..in) = buffer[offset + sum(i_d * strides_d)] where every masked dim
// d has mask_d.first <= i_d < mask_d.second; outside the mask the element reads as zero (padding).
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "ir/node.h"

namespace ember::ir {

struct View {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
  std::vector<std::pair<int64_t, int64_t>> mask;  // empty: every element valid

  static View contiguous(const Shape& shape);
  bool has_mask() const { return !mask.empty(); }
  /// Row-major strides, zero offset, no mask.
  bool is_contiguous() const;

  /// nullopt when the new shape cannot be expressed as one strided view of the same buffer.
  std::optional<View> reshape(const Shape& new_shape) const;
  View permute(const std::vector<int64_t>& order) const;
  View expand(const Shape& new_shape) const;
  View pad(const std::vector<int64_t>& pads) const;       // before0, after0, ...
  View shrink(const std::vector<int64_t>& bounds) const;  // start0, end0, ...
  View flip(const std::vector<int64_t>& flags) const;     // 0/1 per dim
  /// Applies one movement node's op (its arg) to this view.
  std::optional<View> apply(const Node& movement) const;

  bool operator==(const View& o) const {
    return shape == o.shape && strides == o.strides && offset == o.offset && mask == o.mask;
  }
};

std::vector<int64_t> contiguous_strides(const Shape& shape);

}  // namespace ember::ir
