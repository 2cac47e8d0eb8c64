// The engine's buffer table: the memory behind each BUFFER node.
//
// A BUFFER node names a buffer and the version of its data that it reads (ir/node.h: arg {id,
// version}); it holds no memory itself. The table maps the node to the Storage that holds that
// data: the buffer's own storage while the version is current, or the copy that an in-place
// overwrite kept for the node's readers (engine/overwrite.h: redirect). For the tensor layer it
// also keeps the expression whose value a realized buffer holds (autograd's origin).
//
// An entry lives exactly as long as its node: make_buffer adds it, and the node's last release
// removes it (ir::set_buffer_release), dropping the entry's storage and origin. Lookups are
// valid while the caller holds the node.
#pragma once
#include <cstddef>
#include <memory>

#include "ember/dim_vector.h"
#include "ir/node.h"
#include "runtime/storage.h"

namespace ember::engine {

using StorageRef = std::shared_ptr<runtime::Storage>;

/// A BUFFER node reading the current version of `storage` with `shape` (numel must match).
ir::NodeRef make_buffer(StorageRef storage, DimVector shape);

/// The storage a BUFFER node reads. Throws Error for a node that is not a BUFFER of this table.
const StorageRef& storage_of(const ir::Node& buffer);

/// Throws Error when `buffer` reads a version of its data that was overwritten without a copy
/// kept for it (a reader that engine::preserve_for_readers missed: a bug, never a wrong value).
void check_current(const ir::Node& buffer);

/// The lazy expression whose realized value `buffer` holds, kept when that value requires grad
/// so that autograd can differentiate through a realized tensor (null: none). The tensor layer
/// sets it once, when it binds a tensor to the buffer of its realized value.
ir::NodeRef origin_of(const ir::Node& buffer);
void set_origin(const ir::Node& buffer, ir::NodeRef origin);

/// Marks the data `buffer` reads as static for ember::jit (ember/jit.h, StaticData): it depends
/// only on what a capture fixes, so a capture may read it. An in-place write makes a new
/// version, a new node, which is not static.
void set_static(const ir::Node& buffer);
bool is_static(const ir::Node& buffer);

/// From now on `buffer` reads `copy` (which holds the data of the version it reads).
void redirect(const ir::Node& buffer, StorageRef copy);

/// Entries in the table (live BUFFER nodes), for tests.
size_t buffer_table_size();

}  // namespace ember::engine
