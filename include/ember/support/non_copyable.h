// NonCopyable: a private base for a scope or a handle that owns something one of a kind (a grad
// mode to restore, a thread's capture state): copying and moving it are errors at compile time.
// The deleted copy spelled once instead of in every class.
#pragma once

namespace ember::support {

class NonCopyable {
 public:
  NonCopyable(const NonCopyable&) = delete;
  NonCopyable& operator=(const NonCopyable&) = delete;

 protected:
  NonCopyable() = default;
  ~NonCopyable() = default;
};

}  // namespace ember::support
