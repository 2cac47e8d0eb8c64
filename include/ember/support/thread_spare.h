// A per-thread spare of a reusable value (vectors kept with their memory): a call that runs often
// on small inputs (an eager realize) takes one, and gives it back emptied when done, so that
// repeating the call allocates none of its vectors (issue 11).
#pragma once
#include <memory>

namespace ember::support {

/// Takes a value of type T from this thread's spares (a default T when there is none) and gives it
/// back, emptied with `T::clear()`, on destruction. A spare is taken, not shared, so a nested call
/// (a realize from a launch recorder) gets its own. At most 4 spares are kept per thread and type;
/// during the thread's exit, values are neither taken nor kept. A ThreadSpare is a scoped local:
/// spares are taken and given back in nested order, so the spares in use are the first `used` of
/// the thread's slots, and taking one moves nothing (the value stays in its slot).
template <class T>
class ThreadSpare {
 public:
  ThreadSpare() {
    if (Slots* s = slots(); s && s->used < kMax) {
      std::unique_ptr<T>& p = s->items[s->used];
      if (!p) p = std::make_unique<T>();
      s->used++;
      slots_ = s;
      value_ = p.get();
    } else {
      own_ = std::make_unique<T>();
      value_ = own_.get();
    }
  }
  ~ThreadSpare() {
    value_->clear();
    if (slots_) slots_->used--;
  }
  ThreadSpare(const ThreadSpare&) = delete;
  ThreadSpare& operator=(const ThreadSpare&) = delete;
  T& operator*() { return *value_; }
  T* operator->() { return value_; }

 private:
  static constexpr int kMax = 4;
  // Trivially destructible, so it stays readable after the slots below are destroyed.
  static bool& gone() {
    thread_local bool g = false;
    return g;
  }
  struct Slots {
    std::unique_ptr<T> items[kMax];
    int used = 0;
    ~Slots() { gone() = true; }
  };
  static Slots* slots() {
    if (gone()) return nullptr;
    thread_local Slots s;
    return &s;
  }

  T* value_ = nullptr;
  Slots* slots_ = nullptr;  // where value_ came from (null: own_)
  std::unique_ptr<T> own_;
};

}  // namespace ember::support
