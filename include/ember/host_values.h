// ember/host_values.h — values made on the host instead of by a kernel: what start-up needs
// (parameters, optimizer states, initialisers) then compiles nothing (issue 17, cold start).
#pragma once
#include <cstdint>
#include <vector>

#include "ember/tensor.h"

namespace ember {

/// The n values rand({n}) would hold, from the same stream position (the generator advances by
/// n), computed on the host: for initialisers that do their work there (nn/init). Throws
/// ValueError for n < 0.
std::vector<float> rand_values(int64_t n);
/// The same for rand({n}, kFloat64) (53 random bits each).
std::vector<double> rand_values_f64(int64_t n);

/// t.clone(), realized: a buffer of its own without gradient history. A constant (full, zeros,
/// ones, or a reshape, expand or permute of one) is filled on the host; anything else, and
/// everything while ember::jit captures, is computed by a kernel.
Tensor realized_clone(const Tensor& t);

}  // namespace ember
