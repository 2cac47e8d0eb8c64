// ember/nn/options.h — how module options are spelled (libtorch's TORCH_ARG and ExpandingArray):
// `Conv2dOptions(1, 6, 5).stride(2).padding({1, 2})` sets an option and returns the options;
// `options.stride()` reads it.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "ember/error.h"

namespace ember::nn {

/// D sizes (one per spatial dim) given as one value for all or as D values.
template <size_t D>
class ExpandingArray {
 public:
  ExpandingArray(int64_t v) { values_.fill(v); }
  ExpandingArray(std::initializer_list<int64_t> v) : ExpandingArray(std::vector<int64_t>(v)) {}
  ExpandingArray(const std::vector<int64_t>& v) {
    if (v.size() == 1) {
      values_.fill(v[0]);
    } else if (v.size() == D) {
      std::copy(v.begin(), v.end(), values_.begin());
    } else {
      throw ValueError("expected 1 or " + std::to_string(D) + " values, got " +
                       std::to_string(v.size()));
    }
  }
  int64_t operator[](size_t i) const { return values_.at(i); }
  /// The values as a list (the tensor functions' IntList).
  std::vector<int64_t> vec() const { return {values_.begin(), values_.end()}; }

 private:
  std::array<int64_t, D> values_{};
};

}  // namespace ember::nn

/// An option `name` of type T: a setter returning the options and a getter.
#define EMBER_ARG(T, name)                  \
 public:                                    \
  auto& name(const T& v) {                  \
    this->name##_ = v;                      \
    return *this;                           \
  }                                         \
  const T& name() const { return name##_; } \
                                            \
 private:                                   \
  T name##_

/// An option `name` that only the options with `condition` true have (a template's parameter:
/// ConvTranspose's output_padding in ConvNdOptions): its setter and getter require it.
#define EMBER_ARG_IF(condition, T, name)                        \
 public:                                                        \
  auto& name(const T& v) requires(condition) {                  \
    this->name##_ = v;                                          \
    return *this;                                               \
  }                                                             \
  const T& name() const requires(condition) { return name##_; } \
                                                                \
 private:                                                       \
  T name##_
