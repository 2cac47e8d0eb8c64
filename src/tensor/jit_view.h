// A jit input passed as a view of a buffer (x.t(), a slice, a reshape of a realized tensor): the
// captured kernels read the buffer in place through the view's index arithmetic, so a replay
// binds the new input's buffer and needs the same view of a buffer of the same size.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/node.h"

namespace ember::detail::jit {

/// The buffer under n's movement ops (and DETACHes); n itself when it is a buffer; null when n
/// is neither (a lazy value).
const ir::Node* view_base(const ir::Node* n);

/// The view's structure from n down to its buffer: per node its op, dtype, shape and argument;
/// the buffer's dtype and shape but not which buffer it is (its id and version). Two views with
/// the same key index their buffers alike. n: a view of a buffer (view_base(n) != null).
void view_key(const ir::Node* n, std::vector<int64_t>& key);

/// view_key(n) == key, without building it.
bool same_view(const ir::Node* n, const std::vector<int64_t>& key);

}  // namespace ember::detail::jit
