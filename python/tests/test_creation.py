"""Creation functions and dtypes, against NumPy's values and PyTorch's defaults."""
import numpy as np
import pytest

import ember


def test_tensor_from_lists_takes_pytorchs_default_dtypes():
    assert ember.tensor([1.5, 2.0]).dtype == ember.float32
    assert ember.tensor([[1, 2], [3, 4]]).dtype == ember.int64
    assert ember.tensor([True, False]).dtype == ember.bool
    assert ember.tensor(3.0).shape == ()
    np.testing.assert_array_equal(ember.tensor([[1, 2], [3, 4]]).numpy(), [[1, 2], [3, 4]])


def test_tensor_from_an_array_keeps_its_dtype():
    a = np.array([1.25, -2.5], dtype=np.float64)
    t = ember.tensor(a)
    assert t.dtype == ember.float64
    np.testing.assert_array_equal(t.numpy(), a)


def test_tensor_dtype_and_requires_grad_arguments():
    t = ember.tensor([1, 2], dtype=ember.float64, requires_grad=True)
    assert t.dtype == ember.float64 and t.requires_grad


def test_zeros_ones_take_sizes_as_ints_or_one_tuple():
    assert ember.zeros(2, 3).shape == (2, 3)
    assert ember.ones((4,)).shape == (4,)
    np.testing.assert_array_equal(ember.zeros(2, 3).numpy(), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(ember.ones([2], dtype=ember.int32).numpy(),
                                  np.ones(2, np.int32))
    assert ember.ones(2, dtype=ember.int32).dtype == ember.int32


@pytest.mark.parametrize("args,kwargs", [((5,), {}), ((2, 7), {}), ((1, 2, 0.25), {}),
                                         ((10, 0, -3), {}), ((4,), {"dtype": ember.float64})])
def test_arange_matches_numpy(args, kwargs):
    t = ember.arange(*args, **kwargs)
    expect = np.arange(*args)
    if "dtype" in kwargs:
        expect = expect.astype(np.float64)
    elif expect.dtype == np.float64:
        expect = expect.astype(np.float32)
    assert t.numpy().dtype == expect.dtype
    np.testing.assert_array_equal(t.numpy(), expect)


def test_rand_is_uniform_in_unit_interval_and_seeded():
    ember.manual_seed(3)
    a = ember.rand(10000).numpy()
    ember.manual_seed(3)
    b = ember.rand(10000).numpy()
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32 and a.min() >= 0 and a.max() < 1
    assert abs(a.mean() - 0.5) < 0.02  # 10,000 draws: the mean's sd is 0.003
    ember.manual_seed(4)
    assert not np.array_equal(ember.rand(10000).numpy(), a)


def test_randn_is_standard_normal():
    ember.manual_seed(1)
    a = ember.randn(100, 100, dtype=ember.float64).numpy()
    assert a.shape == (100, 100) and a.dtype == np.float64
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05  # sd of each: 0.01, 0.007


def test_dtypes_print_as_ember_names():
    assert repr(ember.float32) == "ember.float32"
    assert ember.float is ember.float32 or ember.float == ember.float32
    assert ember.float64.is_floating_point and not ember.int64.is_floating_point
    assert ember.float16.itemsize == 2
