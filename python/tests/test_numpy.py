"""NumPy exchange: numpy() shares the tensor's buffer (no copy), from_numpy shares the array's
where it can and copies otherwise; dtypes, lifetimes and arrays that are not C-contiguous,
aligned, writeable or native."""
import gc
import sys

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


def test_from_numpy_shares_a_contiguous_writeable_array():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ember.from_numpy(a)
    a[0, 1] = 9  # the array's write is the tensor's value
    assert t[0, 1].item() == 9.0
    t *= 2  # ember's in-place write is the array's
    np.testing.assert_array_equal(a, [[0, 18, 4], [6, 8, 10]])
    assert np.shares_memory(t.numpy(), a)


def test_from_numpy_keeps_the_array_alive():
    a = np.arange(1000, dtype=np.int64)
    ref = sys.getrefcount(a)
    t = ember.from_numpy(a)
    assert sys.getrefcount(a) == ref + 1
    view = t.numpy()
    del a
    gc.collect()
    ember.arange(1000).numpy()  # new allocations must not reuse the array's memory
    np.testing.assert_array_equal(view, np.arange(1000))
    assert (t * 2).sum().item() == 999 * 1000


def test_from_numpy_releases_the_array_with_the_tensor():
    a = np.ones(8, np.float32)
    ref = sys.getrefcount(a)
    t = ember.from_numpy(a)
    r = t + 1  # a lazy result reads the array's memory: it holds it too
    del t
    gc.collect()
    assert sys.getrefcount(a) == ref + 1
    assert r.tolist() == [2.0] * 8
    del r
    gc.collect()
    assert sys.getrefcount(a) == ref


def test_from_numpy_copies_what_it_cannot_share():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    ro = base.copy()
    ro.flags.writeable = False
    unaligned = np.frombuffer(b"\0" + np.arange(4, dtype=np.int32).tobytes(), np.int32, 4, 1)
    assert not unaligned.flags.aligned
    for a in (base[:, ::2], base.T, ro, unaligned, np.arange(3, dtype=">i4")):
        t = ember.from_numpy(a)
        np.testing.assert_array_equal(t.numpy(), a)
        assert not np.shares_memory(t.numpy(), a)
    t = ember.tensor(base)  # tensor() always copies, as torch.tensor
    base[0, 0] = 7
    assert t[0, 0].item() == 0.0


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


def detach_numpy_story(lib, no_grad, tensor, step):
    """What the user sees through w.detach().numpy() of a parameter: the values after writes
    through the array, an in-place update and an optimizer step."""
    w = tensor([[1.0, 2.0], [3.0, 4.0]])
    a = w.detach().numpy()
    seen = [a.tolist()]
    a[0, 0] = 10.0  # the array's write is the parameter's value
    seen.append(w.detach().numpy().tolist())
    with no_grad():
        w *= 2  # an in-place update is the array's
    seen.append(a.tolist())
    (w * w).sum().backward()
    step(w)  # SGD, lr 0.125: w -= 0.25 w
    seen.append(a.tolist())
    return w, a, seen


def test_detach_numpy_shares_a_realized_tensors_buffer_both_ways_as_torch():
    torch = pytest.importorskip("torch")

    def ember_step(w):
        ember.optim.SGD([w], lr=0.125).step()

    def torch_step(w):
        torch.optim.SGD([w], lr=0.125).step()

    w, a, seen = detach_numpy_story(
        ember, ember.no_grad, lambda v: ember.tensor(v, requires_grad=True), ember_step)
    _, _, want = detach_numpy_story(
        torch, torch.no_grad, lambda v: torch.tensor(v, requires_grad=True), torch_step)
    assert seen == want and seen[-1] == [[15.0, 3.0], [4.5, 6.0]]
    assert np.shares_memory(a, w.detach().numpy()) and np.shares_memory(a, np.asarray(w))
    del w
    gc.collect()
    ember.ones(4).numpy()  # new allocations must not reuse a's memory
    assert a.tolist() == [[15.0, 3.0], [4.5, 6.0]]


def test_detach_numpy_of_a_lazy_tensor_realizes_it():
    w = ember.tensor([1.0, 2.0], requires_grad=True)
    a = (w * 3).detach().numpy()
    assert a.tolist() == [3.0, 6.0] and not np.shares_memory(a, w.detach().numpy())
