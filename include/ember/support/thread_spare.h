// A per-thread spare of a reusable value (vectors kept with their memory): a call that runs often
// on small inputs (an eager realize) takes one, and gives it back emptied when done, so that
// repeating the call allocates none of its vectors (issue 11).
#pragma once
#include <utility>
#include <vector>

namespace ember::support {

/// Takes a value of type T from this thread's spares (a default T when there is none) and gives it
/// back, emptied with `T::clear()`, on destruction. A spare is taken, not shared, so a nested call
/// (a realize from a launch hook) gets its own. At most 4 spares are kept per thread and type;
/// during the thread's exit, values are neither taken nor kept.
template <class T>
class ThreadSpare {
 public:
  ThreadSpare() {
    if (std::vector<T>* l = spares(); l && !l->empty()) {
      value_ = std::move(l->back());
      l->pop_back();
    }
  }
  ~ThreadSpare() {
    value_.clear();
    if (std::vector<T>* l = spares(); l && l->size() < 4) l->push_back(std::move(value_));
  }
  ThreadSpare(const ThreadSpare&) = delete;
  ThreadSpare& operator=(const ThreadSpare&) = delete;
  T& operator*() { return value_; }
  T* operator->() { return &value_; }

 private:
  // Trivially destructible, so it stays readable after the list below is destroyed.
  static bool& gone() {
    thread_local bool g = false;
    return g;
  }
  struct List {
    std::vector<T> items;
    ~List() { gone() = true; }
  };
  static std::vector<T>* spares() {
    if (gone()) return nullptr;
    thread_local List list;
    return &list.items;
  }

  T value_;
};

}  // namespace ember::support
