// Grad mode: whether new results record that they require grad (libtorch's NoGradGuard).
#pragma once
#include "ember/support/non_copyable.h"

namespace ember {

/// While alive, results of operations do not require grad (as torch::NoGradGuard).
class NoGradGuard : support::NonCopyable {
 public:
  NoGradGuard();
  ~NoGradGuard();

 private:
  bool prev_;
};

}  // namespace ember
