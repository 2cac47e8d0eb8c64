// SrcList: a node's sources, held in the node itself. No primitive takes more than three
// (ops.def's largest arity), so a node needs no vector of its own: making and dropping the nodes
// of a small eager call allocates, moves and recycles no source list (issue 11).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "ember/error.h"
#include "ember/support/contiguous_list.h"

namespace ember::ir {

template <class Ref>
class InlineRefs : public support::ContiguousList<InlineRefs<Ref>, Ref> {
 public:
  static constexpr size_t kMax = 3;

  InlineRefs() noexcept = default;
  InlineRefs(std::initializer_list<Ref> l) {
    for (const Ref& r : l) push_back(r);
  }
  InlineRefs(std::vector<Ref>&& v) {  // NOLINT: implicit, as make_node's callers pass vectors
    for (Ref& r : v) push_back(std::move(r));
    v.clear();
  }
  InlineRefs(const std::vector<Ref>& v) {  // NOLINT
    for (const Ref& r : v) push_back(r);
  }
  InlineRefs(const InlineRefs& o) {
    for (const Ref& r : o) push_back(r);
  }
  // Moves swap every slot, used or not (those past n_ are null): no branch and no count.
  InlineRefs(InlineRefs&& o) noexcept : n_(o.n_) {
    for (size_t i = 0; i < kMax; i++) items_[i].swap(o.items_[i]);
    o.n_ = 0;
  }
  InlineRefs& operator=(const InlineRefs& o) {
    if (this != &o) {
      InlineRefs c(o);
      *this = std::move(c);
    }
    return *this;
  }
  InlineRefs& operator=(InlineRefs&& o) noexcept {
    if (this != &o) {
      clear();
      for (size_t i = 0; i < kMax; i++) items_[i].swap(o.items_[i]);
      n_ = o.n_;
      o.n_ = 0;
    }
    return *this;
  }
  // First to last, as a vector destroys its elements (a source's destruction order is visible
  // in its storage's reader list).
  ~InlineRefs() { clear(); }

  void push_back(Ref r) {
    if (n_ == kMax) throw Error("a node has at most 3 sources");
    items_[n_++] = std::move(r);
  }
  void clear() noexcept {
    for (size_t i = 0; i < n_; i++) items_[i].reset();
    n_ = 0;
  }
  size_t size() const noexcept { return n_; }
  Ref* data() noexcept { return items_; }
  const Ref* data() const noexcept { return items_; }
  Ref& operator[](size_t i) noexcept { return items_[i]; }
  const Ref& operator[](size_t i) const noexcept { return items_[i]; }
  const Ref& at(size_t i) const {
    if (i >= n_) throw IndexError("source index out of range");
    return items_[i];
  }
  const Ref& front() const noexcept { return items_[0]; }
  const Ref& back() const noexcept { return items_[n_ - 1]; }

 private:
  Ref items_[kMax];  // null past n_
  uint8_t n_ = 0;
};

}  // namespace ember::ir
