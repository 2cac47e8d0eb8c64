// Helpers of the codegen plan tests: realized random inputs, and what a realize prints at DEBUG=3
// (each kernel's "opts" line: the plan the heuristic chose).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "ember/ember.h"

namespace ember::test {

// randn(shape), realized: a buffer the kernels under test read, not a node they fuse.
inline Tensor input(IntList shape) {
  Tensor t = randn(shape);
  t.realize();
  return t;
}

// Float lanes of the kernel target's vectors: kernel_target() reads "avx2 (256-bit vectors, 16
// registers, ...)"; the scalar level has 1 lane.
inline int64_t float_lanes() {
  std::string t = kernel_target();
  auto p = t.find("-bit vectors");
  if (p == std::string::npos) return 1;
  auto b = t.rfind('(', p);
  return std::stoll(t.substr(b + 1, p - b - 1)) / 32;
}

// Vector registers of the kernel target ("16 registers" in kernel_target()); 0 if not given.
inline int64_t vector_registers() {
  std::string t = kernel_target();
  auto p = t.find(" registers");
  if (p == std::string::npos) return 0;
  auto b = t.rfind(' ', p - 1);
  return std::stoll(t.substr(b + 1, p - b - 1));
}

// Realizes `t` with DEBUG=3 and returns what it printed.
inline std::string debug3(const Tensor& t) {
  Context& ctx = Context::get();
  int old = ctx.debug;
  ctx.debug = 3;
  testing::internal::CaptureStderr();
  realize({t});
  std::string out = testing::internal::GetCapturedStderr();
  ctx.debug = old;
  return out;
}

}  // namespace ember::test
