"""DLPack both ways with NumPy and PyTorch (CPU): memory shared, not copied (a write through one
side is seen by the other), lifetimes held by the capsule's deleter, dtypes, strided and
unsupported inputs."""
import gc
import sys

import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # Debian's python3-torch (scripts/install-deps.sh test) or the venv's
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed (python3-torch)")

DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64]


def test_the_device_is_the_cpu():
    assert ember.ones(2).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("dt", DTYPES)
def test_numpy_reads_ember_every_dtype(dt):
    t = ember.from_numpy((np.arange(12).reshape(3, 4) % 7).astype(dt))
    a = np.from_dlpack(t)
    assert a.dtype == dt and a.shape == (3, 4)
    np.testing.assert_array_equal(a, (np.arange(12).reshape(3, 4) % 7).astype(dt))


@pytest.mark.parametrize("dt", DTYPES)
def test_ember_reads_numpy_every_dtype(dt):
    a = (np.arange(12).reshape(2, 6) % 7).astype(dt)
    t = ember.from_dlpack(a)
    assert t.dtype == getattr(ember, np.dtype(dt).name) and t.shape == (2, 6)
    np.testing.assert_array_equal(t.numpy(), a)


def test_numpy_shares_ember_memory():
    t = ember.arange(6, dtype=ember.float32) * 2  # lazy: realized on export
    a = np.from_dlpack(t)  # NumPy marks what it imports read-only (torch below writes)
    np.testing.assert_array_equal(a, [0, 2, 4, 6, 8, 10])
    assert np.shares_memory(a, t.numpy())
    t += 1  # ember's in-place write is numpy's
    np.testing.assert_array_equal(a, [1, 3, 5, 7, 9, 11])


def test_ember_shares_numpy_memory():
    a = np.zeros((2, 3), np.float64)
    t = ember.from_dlpack(a)
    a[1, 2] = 4.5
    assert t[1, 2].item() == 4.5
    t += 1.0
    np.testing.assert_array_equal(a, [[1, 1, 1], [1, 1, 5.5]])
    assert np.shares_memory(t.numpy(), a)


def test_numpy_keeps_ember_memory_alive():
    t = ember.arange(1000, dtype=ember.float64) + 0.5
    a = np.from_dlpack(t)
    del t
    gc.collect()
    ember.ones(1000, dtype=ember.float64).numpy()  # must not reuse a's memory
    np.testing.assert_array_equal(a, np.arange(1000) + 0.5)


def test_ember_keeps_numpy_memory_alive_and_releases_it():
    a = np.arange(100, dtype=np.int32)
    ref = sys.getrefcount(a)
    t = ember.from_dlpack(a)
    assert sys.getrefcount(a) > ref  # the capsule's deleter holds the array
    del a
    gc.collect()
    np.zeros(100, np.int32)
    assert (t * 3).sum().item() == 3 * 99 * 100 // 2
    b = np.arange(5, dtype=np.int32)
    ref = sys.getrefcount(b)
    u = ember.from_dlpack(b)
    del u
    gc.collect()
    assert sys.getrefcount(b) == ref  # the deleter ran once the tensor died


def test_views_and_lazy_tensors_export_their_values():
    x = ember.arange(12).reshape(3, 4)
    np.testing.assert_array_equal(np.from_dlpack(x[:, 1:3]), np.arange(12).reshape(3, 4)[:, 1:3])
    np.testing.assert_array_equal(np.from_dlpack(x.t()), np.arange(12).reshape(3, 4).T)
    z = np.from_dlpack(ember.ones(0, 3))
    assert z.shape == (0, 3)


def test_strided_numpy_arrays_are_copied_correctly():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for a in (base[:, ::2], base.T, base[1:3, 2:5]):
        t = ember.from_dlpack(a)
        np.testing.assert_array_equal(t.numpy(), a)
    assert ember.from_dlpack(np.zeros((0, 2), np.int64)).shape == (0, 2)
    assert ember.from_dlpack(np.array(3.5)).item() == 3.5


def test_a_capsule_is_read_once_and_bad_inputs_raise():
    t = ember.ones(3)
    capsule = t.__dlpack__()
    u = ember.from_dlpack(capsule)
    assert u.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="consumed"):
        ember.from_dlpack(capsule)
    with pytest.raises(ValueError, match="requires grad"):
        ember.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(ValueError, match="stream"):
        ember.ones(2).__dlpack__(stream=1)
    with pytest.raises(TypeError, match="dtype"):
        ember.from_dlpack(np.array([1 + 2j]))
    unused = t.__dlpack__()  # collected unconsumed: its destructor releases its handle once
    del unused
    gc.collect()
    assert t.tolist() == [1.0, 1.0, 1.0] and u.tolist() == [1.0, 1.0, 1.0]


def test_copy_requested_by_the_consumer():
    t = ember.zeros(3)
    c = ember.from_dlpack(t.__dlpack__(copy=True))
    shared = ember.from_dlpack(t.__dlpack__())
    t += 1
    assert c.tolist() == [0.0, 0.0, 0.0] and shared.tolist() == [1.0, 1.0, 1.0]
    assert ember.ones(2, requires_grad=True).__dlpack__(copy=True) is not None


@needs_torch
@pytest.mark.parametrize("dt", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                                torch.float16, torch.bfloat16, torch.float32, torch.float64]
                         if torch else [])
def test_torch_both_ways_every_dtype(dt):
    x = (torch.arange(12).reshape(3, 4) % 7).to(dt)
    t = ember.from_dlpack(x)
    assert str(t.dtype) == "ember." + str(dt).split(".")[1]
    back = torch.from_dlpack(t)
    assert back.dtype == dt
    assert torch.equal(back, x)


@needs_torch
def test_torch_shares_memory_both_ways():
    x = torch.zeros(2, 3)
    t = ember.from_dlpack(x)
    x[0, 1] = 7.0
    assert t[0, 1].item() == 7.0
    t *= 2
    assert x[0, 1].item() == 14.0
    e = ember.arange(4, dtype=ember.float32)
    y = torch.from_dlpack(e)
    y[2] = -3.0
    assert e.tolist() == [0.0, 1.0, -3.0, 3.0]
    assert y.data_ptr() == torch.from_dlpack(e).data_ptr()
    del e
    gc.collect()
    assert y.tolist() == [0.0, 1.0, -3.0, 3.0]  # torch's tensor holds ember's buffer


@needs_torch
def test_torch_strided_tensors_are_copied_correctly():
    x = torch.arange(20, dtype=torch.float32).reshape(4, 5)
    for v in (x.t(), x[:, 1::2], x[1:3]):
        np.testing.assert_array_equal(ember.from_dlpack(v).numpy(), v.numpy())
