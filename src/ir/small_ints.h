// A node's argument integers: the same small vector as a tensor's shape (ember/dim_vector.h).
#pragma once
#include "ember/dim_vector.h"

namespace ember::ir {
using SmallInts = DimVector;
}  // namespace ember::ir
