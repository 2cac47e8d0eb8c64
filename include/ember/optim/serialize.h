// ember/optim/serialize.h — an optimizer's state as a safetensors checkpoint (the format and the
// errors: ember/io/safetensors.h).
#pragma once
#include <string>

#include "ember/io/safetensors.h"
#include "ember/optim/optimizer.h"

namespace ember {

/// The metadata key that holds an optimizer's learning rate (shortest round-trip decimal).
inline constexpr const char* kOptimizerLrKey = "lr";

/// Saves `optimizer.state()` (e.g. Adam's "0.exp_avg", "0.exp_avg_sq", ..., "steps": each
/// parameter's step count) and its learning rate (metadata "lr"). Throws IOError.
void save(const optim::Optimizer& optimizer, const std::string& path);

/// Loads an optimizer state written by `save(optimizer, ...)` into the optimizer's state tensors,
/// in place, and restores its learning rate. The optimizer must be of the same kind over
/// parameters of the same shapes. Throws IOError (also when "lr" is missing or not a valid
/// non-negative number); on error nothing is changed. Files written before the step counts were
/// per parameter (one global count: Adam's "step", SGD's "first_step", in place of "steps")
/// still load: every parameter's count becomes the file's global one.
void load(optim::Optimizer& optimizer, const std::string& path);

}  // namespace ember
