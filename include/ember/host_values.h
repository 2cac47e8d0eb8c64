// ember/host_values.h — values made on the host instead of by a kernel: what start-up needs
// (parameters, optimizer states, initialisers) then compiles nothing (issue 17, cold start);
// and the host memory a tensor's values are in, for exporters that share it.
#pragma once
#include <cstdint>
#include <memory>
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

/// For exporters that share memory (NumPy, DLPack): the host memory of the buffer a tensor reads
/// unchanged, which is its own when it is realized, or that of the realized tensor it is a
/// detach() of (detach shares the storage, as torch's does), and a handle that keeps that memory
/// alive; {nullptr, {}} otherwise (a lazy value, another view, a pending update). Inside an
/// ember::jit capture, Error for a value that is not static (as item()).
struct SharedData {
  void* data = nullptr;
  std::shared_ptr<void> owner;
};
SharedData shared_data(const Tensor& t);

}  // namespace ember
