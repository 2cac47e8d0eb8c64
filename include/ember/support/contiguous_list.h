// ContiguousList: the read side of std::vector's interface for a small list class that keeps its
// elements in one array (ember::DimVector, ir::InlineRefs): iterators, emptiness, a copy as a
// vector and equality, from the class's data() and size(). A CRTP base with no state of its own.
#pragma once
#include <algorithm>
#include <vector>

namespace ember::support {

template <class Derived, class T>
class ContiguousList {
 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  bool empty() const noexcept { return self().size() == 0; }
  T* begin() noexcept { return self().data(); }
  T* end() noexcept { return self().data() + self().size(); }
  const T* begin() const noexcept { return self().data(); }
  const T* end() const noexcept { return self().data() + self().size(); }
  /// The elements as a vector (for code that keeps a list of its own).
  std::vector<T> vec() const { return {begin(), end()}; }

  friend bool operator==(const Derived& a, const Derived& b) noexcept {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
  const Derived& self() const noexcept { return static_cast<const Derived&>(*this); }
};

}  // namespace ember::support
