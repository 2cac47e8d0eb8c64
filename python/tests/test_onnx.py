"""ember.onnx.load: a model from ONNX's backend test data (Debian libonnx-testdata) gives the
outputs that ONNX recorded and that NumPy computes from the same inputs; bad files and inputs
raise Python's exceptions with ember's messages."""
import os

import numpy as np
import pytest

import ember

DATA = "/usr/share/libonnx-testdata/data/node"
GEMM = os.path.join(DATA, "test_gemm_all_attributes")  # alpha 0.25, beta 0.35, transA, transB
pytestmark = [
    pytest.mark.skipif(not os.path.isdir(GEMM), reason="needs Debian's libonnx-testdata"),
    pytest.mark.skipif(not hasattr(ember._ember, "_onnx"), reason="built without ONNX"),
]


def case(name):
    d = os.path.join(GEMM, "test_data_set_0")
    return ember.onnx.load_tensor(os.path.join(d, name)).numpy()


def test_gemm_matches_onnx_and_numpy():
    model = ember.onnx.load(GEMM + "/model.onnx")
    assert model.input_names == ["a", "b", "c"] and model.output_names == ["y"]
    assert model.unsupported_ops() == []
    a, b, c = case("input_0.pb"), case("input_1.pb"), case("input_2.pb")
    y = model(a, b, c)
    assert isinstance(y, ember.Tensor) and y.shape == (3, 5)
    want = 0.25 * a.T.astype(np.float64) @ b.T.astype(np.float64) + 0.35 * c
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.numpy(), case("output_0.pb"), rtol=1e-5, atol=1e-6)
    # by name, as ember tensors, and again (a second call builds the graph again)
    y2 = model(ember.from_numpy(a), c=ember.from_numpy(c), b=ember.from_numpy(b))
    np.testing.assert_array_equal(y2.numpy(), y.numpy())


def test_malformed_and_missing_files_raise_oserror(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage, not a ModelProto" * 3)
    with pytest.raises(OSError, match="bad.onnx"):
        ember.onnx.load(bad)
    with pytest.raises(OSError, match="missing.onnx"):
        ember.onnx.load(tmp_path / "missing.onnx")
    with pytest.raises(OSError):
        ember.onnx.load_tensor(bad)


def test_wrong_inputs_raise():
    model = ember.onnx.load(GEMM + "/model.onnx")
    a, b, c = case("input_0.pb"), case("input_1.pb"), case("input_2.pb")
    with pytest.raises(ValueError, match="'a'"):
        model(a.astype(np.float64), b, c)  # the model declares float
    with pytest.raises(ValueError):
        model(a, b, c, c)
    with pytest.raises(ValueError):
        model(a, b, d=c)  # no input named d
    with pytest.raises(TypeError):
        model([1.0], b, c)
