// DimVector: an integer list that keeps up to kInline values in itself and only a longer one on
// the heap (libtorch's name for its small vector of dims). A tensor's shape (Tensor::sizes(), held
// in its graph node) and a node's argument (axes, a permutation, a shape of up to six dims) fit:
// making and dropping the nodes of a small eager call then allocates no shape or argument vector
// (issue 11). The interface is the part of std::vector's that the code uses, and it converts to
// and from std::vector<int64_t>.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <vector>

#include "ember/error.h"
#include "ember/support/contiguous_list.h"

namespace ember {

class DimVector : public support::ContiguousList<DimVector, int64_t> {
 public:
  static constexpr size_t kInline = 6;

  DimVector() noexcept = default;
  DimVector(std::initializer_list<int64_t> l) { assign_n(l.begin(), l.size()); }
  DimVector(const std::vector<int64_t>& v) { assign_n(v.data(), v.size()); }  // NOLINT: implicit
  DimVector(size_t n, int64_t value) { resize(n, value); }
  template <std::contiguous_iterator It>
  DimVector(It first, It last) {
    assign(first, last);
  }
  DimVector(const DimVector& o) { assign_n(o.p_, o.n_); }
  DimVector(DimVector&& o) noexcept { take(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign_n(o.p_, o.n_);
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  DimVector& operator=(const std::vector<int64_t>& v) {
    assign_n(v.data(), v.size());
    return *this;
  }
  DimVector& operator=(std::initializer_list<int64_t> l) {
    assign_n(l.begin(), l.size());
    return *this;
  }
  ~DimVector() { release(); }
  operator std::vector<int64_t>() const { return vec(); }  // NOLINT: implicit

  template <class It>
  void assign(It first, It last) {
    assign_n(std::to_address(first), static_cast<size_t>(std::distance(first, last)));
  }
  void assign(std::initializer_list<int64_t> l) { assign_n(l.begin(), l.size()); }
  void reserve(size_t n) {
    if (n <= cap_) return;
    const size_t cap = std::max(n, 2 * cap_);
    int64_t* p = new int64_t[cap];
    if (n_) std::memcpy(p, p_, n_ * sizeof(int64_t));
    release();
    p_ = p;
    cap_ = cap;
  }
  void push_back(int64_t v) {
    if (n_ == cap_) reserve(n_ + 1);
    p_[n_++] = v;
  }
  void pop_back() noexcept { n_--; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = n_; i < n; i++) p_[i] = value;
    n_ = n;
  }
  void clear() noexcept { n_ = 0; }
  size_t size() const noexcept { return n_; }
  size_t capacity() const noexcept { return cap_; }
  int64_t* data() noexcept { return p_; }
  const int64_t* data() const noexcept { return p_; }
  /// operator[], front() and back() are unchecked (as std::vector's): i < size(), non-empty.
  /// at() throws IndexError when i >= size().
  int64_t& operator[](size_t i) noexcept { return p_[i]; }
  int64_t operator[](size_t i) const noexcept { return p_[i]; }
  int64_t& at(size_t i) {
    if (i >= n_) throw IndexError("DimVector::at: index out of range");
    return p_[i];
  }
  int64_t at(size_t i) const {
    if (i >= n_) throw IndexError("DimVector::at: index out of range");
    return p_[i];
  }
  int64_t& front() noexcept { return p_[0]; }
  int64_t front() const noexcept { return p_[0]; }
  int64_t& back() noexcept { return p_[n_ - 1]; }
  int64_t back() const noexcept { return p_[n_ - 1]; }

  friend bool operator==(const DimVector& a, const std::vector<int64_t>& b) noexcept {
    return a.n_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  bool on_heap() const noexcept { return p_ != buf_; }
  // Copies n values from v: an argument of a few values is copied one by one (a call to memmove,
  // which std::copy and GCC's loop idioms make, costs more than the copy).
  void assign_n(const int64_t* v, size_t n) {
    n_ = 0;
    if (n > cap_) reserve(n);
    int64_t* p = p_;
    switch (n) {
      case 6:
        p[5] = v[5];
        [[fallthrough]];
      case 5:
        p[4] = v[4];
        [[fallthrough]];
      case 4:
        p[3] = v[3];
        [[fallthrough]];
      case 3:
        p[2] = v[2];
        [[fallthrough]];
      case 2:
        p[1] = v[1];
        [[fallthrough]];
      case 1:
        p[0] = v[0];
        [[fallthrough]];
      case 0:
        break;
      default:
        std::memcpy(p, v, n * sizeof(int64_t));
    }
    n_ = n;
  }
  void release() noexcept {
    if (on_heap()) delete[] p_;
    p_ = buf_;
    cap_ = kInline;
  }
  // Takes o's values (o is empty afterwards): its heap block, or a copy of its inline ones.
  void take(DimVector& o) noexcept {
    if (o.on_heap()) {
      p_ = o.p_;
      cap_ = o.cap_;
      o.p_ = o.buf_;
      o.cap_ = kInline;
    } else {
      std::memcpy(buf_, o.buf_, sizeof buf_);
    }
    n_ = o.n_;
    o.n_ = 0;
  }

  int64_t* p_ = buf_;
  size_t n_ = 0;
  size_t cap_ = kInline;
  int64_t buf_[kInline];
};

}  // namespace ember
