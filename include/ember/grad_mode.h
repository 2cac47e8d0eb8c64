// Grad mode: whether new results record that they require grad (libtorch's NoGradGuard).
#pragma once

namespace ember {

/// While alive, results of operations do not require grad (as torch::NoGradGuard).
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_;
};

}  // namespace ember
