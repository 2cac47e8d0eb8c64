"""NumPy exchange: numpy() shares the tensor's buffer (no copy), from_numpy copies; dtypes,
lifetimes and arrays that are not C-contiguous or native."""
import gc

import numpy as np
import pytest

import ember

DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.uint16, np.uint32,
          np.uint64, np.float16, np.float32, np.float64]


@pytest.mark.parametrize("dt", DTYPES)
def test_round_trip_every_dtype(dt):
    a = (np.arange(12).reshape(3, 4) % 5).astype(dt)
    t = ember.from_numpy(a)
    assert t.shape == (3, 4) and t.dtype == getattr(ember, np.dtype(dt).name)
    b = t.numpy()
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(b, a)


def test_numpy_shares_the_buffer_both_ways():
    t = ember.zeros(2, 3)
    a = t.numpy()
    assert a.flags.writeable
    a[1, 2] = 5.0
    assert t[1, 2].item() == 5.0  # the array's write is the tensor's value
    assert (t + 1).numpy()[1, 2] == 6.0
    t += 1  # in place: the same buffer
    assert a[1, 2] == 6.0 and a[0, 0] == 1.0
    assert np.shares_memory(a, t.numpy())


def test_numpy_realizes_a_lazy_tensor_and_views_get_their_own_buffer():
    x = ember.arange(6).reshape(2, 3)  # a view of arange's buffer
    a = x.numpy()
    np.testing.assert_array_equal(a, np.arange(6).reshape(2, 3))
    a[0, 0] = 42
    assert x[0, 0].item() == 42  # x now owns the buffer a shares
    col = x[:, 1]  # a strided view
    np.testing.assert_array_equal(col.numpy(), [1, 4])
    assert col.numpy().flags.c_contiguous


def test_the_array_keeps_the_buffer_alive():
    t = ember.arange(1000, dtype=ember.float32) * 2
    a = t.numpy()
    del t
    gc.collect()
    ember.ones(1000).numpy()  # new allocations must not reuse a's memory
    np.testing.assert_array_equal(a, np.arange(1000, dtype=np.float32) * 2)


def test_the_tensor_outlives_a_dropped_array():
    t = ember.ones(4)
    a = t.numpy()
    del a
    gc.collect()
    assert t.sum().item() == 4.0


def test_from_numpy_copies():
    a = np.ones(3, np.float32)
    t = ember.from_numpy(a)
    a[0] = 9
    assert t.tolist() == [1.0, 1.0, 1.0]


def test_non_contiguous_read_only_and_swapped_arrays_are_read_correctly():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for a in (base[:, ::2], base.T, base[::-1]):
        np.testing.assert_array_equal(ember.from_numpy(a).numpy(), a)
    ro = np.arange(5, dtype=np.int32)
    ro.flags.writeable = False
    np.testing.assert_array_equal(ember.from_numpy(ro).numpy(), ro)
    swapped = np.arange(5, dtype=">f8")
    t = ember.from_numpy(swapped)
    assert t.dtype == ember.float64
    np.testing.assert_array_equal(t.numpy(), np.arange(5.0))
    zero_d = np.array(2.5)
    assert ember.from_numpy(zero_d).shape == () and ember.from_numpy(zero_d).item() == 2.5
    assert ember.from_numpy(np.zeros((0, 3), np.float32)).shape == (0, 3)


def test_unsupported_arrays_and_dtypes_raise():
    with pytest.raises(TypeError):
        ember.from_numpy(np.array([1 + 2j]))
    with pytest.raises(TypeError):
        ember.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError):
        ember.from_numpy([1, 2])
    with pytest.raises(ValueError, match="bfloat16"):
        ember.ones(2, dtype=ember.bfloat16).numpy()
    assert ember.ones(2, dtype=ember.bfloat16).tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="requires grad"):
        ember.ones(2, requires_grad=True).numpy()


def test_asarray_uses_the_array_protocol():
    t = ember.tensor([[1.0, 2.0]])
    np.testing.assert_array_equal(np.asarray(t), [[1.0, 2.0]])
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
