"""Operators, reductions and indexing against NumPy on the same values."""
import operator

import numpy as np
import pytest

import ember

rng = np.random.default_rng(0)
A = rng.standard_normal((3, 4)).astype(np.float32)
B = rng.standard_normal((3, 4)).astype(np.float32) + 3  # away from 0: a divisor
ROW = rng.standard_normal((4,)).astype(np.float32)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv])
def test_arithmetic_with_tensors_broadcasting_and_scalars(op):
    a, b, row = ember.tensor(A), ember.tensor(B), ember.tensor(ROW)
    np.testing.assert_allclose(op(a, b).numpy(), op(A, B), rtol=1e-6)
    np.testing.assert_allclose(op(a, row).numpy(), op(A, ROW), rtol=1e-6)
    np.testing.assert_allclose(op(b, 2.5).numpy(), op(B, np.float32(2.5)), rtol=1e-6)
    np.testing.assert_allclose(op(2.5, b).numpy(), op(np.float32(2.5), B), rtol=1e-6)


def test_integer_arithmetic_promotes_as_pytorch():
    i = ember.arange(6).reshape(2, 3)
    assert (i + 1).dtype == ember.int64
    assert (i * 0.5).dtype == ember.float32  # a float scalar: the default float
    assert (i / 2).dtype == ember.float32  # true division
    np.testing.assert_array_equal((i + 1).numpy(), np.arange(6).reshape(2, 3) + 1)


def test_unary_minus_power_and_matmul():
    a, b = ember.tensor(A), ember.tensor(B)
    np.testing.assert_array_equal((-a).numpy(), -A)
    np.testing.assert_allclose((b ** 2).numpy(), B ** 2, rtol=1e-6)
    np.testing.assert_allclose((a @ b.t()).numpy(), A @ B.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.matmul(ember.tensor(ROW)).numpy(), A @ ROW, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                                operator.ne])
def test_comparisons_give_bool_tensors(op):
    a = ember.tensor([1.0, 2.0, 3.0])
    b = ember.tensor([3.0, 2.0, 1.0])
    r = op(a, b)
    assert r.dtype == ember.bool
    np.testing.assert_array_equal(r.numpy(), op(np.array([1.0, 2, 3]), np.array([3.0, 2, 1])))
    np.testing.assert_array_equal(op(a, 2).numpy(), op(np.array([1.0, 2, 3]), 2))


def test_logical_operators_on_bool_tensors():
    p = ember.tensor([True, True, False])
    q = ember.tensor([True, False, False])
    np.testing.assert_array_equal((p & q).numpy(), [True, False, False])
    np.testing.assert_array_equal((p | q).numpy(), [True, True, False])
    np.testing.assert_array_equal((p ^ q).numpy(), [False, True, False])
    np.testing.assert_array_equal((~p).numpy(), [False, False, True])
    with pytest.raises(ValueError, match="only bool"):  # ember's & is logical only
        ember.tensor([6]) & ember.tensor([3])


def test_tensors_hash_by_identity():
    a = ember.ones(2)
    assert len({a, a, ember.ones(2)}) == 2


def test_reductions_and_elementwise_methods():
    a = ember.tensor(A)
    np.testing.assert_allclose(a.sum().item(), A.sum(), rtol=1e-5)
    np.testing.assert_allclose(a.sum(0).numpy(), A.sum(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.mean((0, 1)).item(), A.mean(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.mean(1, keepdim=True).numpy(), A.mean(1, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(a.exp().numpy(), np.exp(A), rtol=1e-5)
    np.testing.assert_allclose(a.tanh().numpy(), np.tanh(A), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(a.relu().numpy(), np.maximum(A, 0))


@pytest.mark.parametrize("key", [1, -1, slice(1, None), (slice(None), 2), (0, slice(1, 3)),
                                 (Ellipsis, 0), (slice(None, None, 2),),
                                 (slice(0, 3, 2), slice(1, 4, 2))])
def test_indexing_matches_numpy(key):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(ember.tensor(x)[key].numpy(), x[key])


def test_item_tolist_and_python_conversions():
    assert ember.tensor(2.5).item() == 2.5 and isinstance(ember.tensor(2.5).item(), float)
    assert ember.tensor(7).item() == 7 and isinstance(ember.tensor(7).item(), int)
    assert ember.tensor(True).item() is True
    assert ember.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert float(ember.tensor([1.5])) == 1.5 and int(ember.tensor(3)) == 3
    assert bool(ember.tensor(0)) is False
    assert len(ember.zeros(5, 2)) == 5


def test_in_place_operators_keep_the_tensor():
    x = ember.tensor([1.0, 2.0])
    y = x
    x += 1
    x *= ember.tensor([2.0, 3.0])
    x -= 0.5
    x /= 2
    assert x is y
    np.testing.assert_array_equal(x.numpy(), ((np.array([1.0, 2.0]) + 1) * [2, 3] - 0.5) / 2)


def test_operations_are_lazy_until_read():
    x = ember.ones(3)
    y = (x * 2 + 1).exp()  # built, not computed
    np.testing.assert_allclose(y.numpy(), np.exp(np.full(3, 3.0)), rtol=1e-6)
