// Static data for ember::jit (ember/jit.h, StaticData): host data a capture may take in, and
// reads a capture may make, because a replay with the same input signature would see the same
// values.
#pragma once
#include "ember/tensor.h"
#include "ir/node.h"

namespace ember::detail {

/// True while a StaticData lives on the calling thread.
bool in_static_scope();
/// Marks a realized BUFFER tensor's data static (engine/buffer_table.h, set_static).
void set_static_buffer(const Tensor& t);
/// True when t's value is computed only from static buffers and constants (no random draws).
bool static_value(const Tensor& t);
bool static_node(const ir::Node& value);
/// Throws ember::Error when a capture runs on this thread and t's value is not static: a read of
/// its data (item, to_vector, printing, an export to NumPy or DLPack) would be frozen into the
/// replay.
void check_data_readable(const Tensor& t);

}  // namespace ember::detail
