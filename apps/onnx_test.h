// `ember onnx test DIR`: one ONNX backend test folder run and compared (apps/onnx_test.cpp).
#pragma once
#include <string>

#include "ember/tensor.h"

namespace ember::app {

struct OnnxTestOptions {
  std::string dir, device;
  double rtol = 1e-3, atol = 1e-7;  // ONNX's backend-test defaults (numpy.testing.assert_allclose)
};

/// Runs the folder's model on every test_data_set_* and compares each output. Prints one line,
/// "ok DIR ..." or "FAIL DIR: KIND: REASON" (KIND: mismatch, unsupported, error), plus the worst
/// element of a mismatch. Returns the exit status: 0 match, 1 mismatch, 2 unsupported, 3 error.
int run_onnx_test(const OnnxTestOptions& o);

/// "[2, 3]".
std::string support_shape(const Tensor& t);

}  // namespace ember::app
