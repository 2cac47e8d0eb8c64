"""ember's errors arrive as Python's exception types with ember's messages; none aborts."""
import pytest

import ember


def test_shape_errors_are_value_errors():
    with pytest.raises(ValueError, match="broadcast"):
        ember.ones(2, 3) + ember.ones(4)
    with pytest.raises(ValueError):
        ember.ones(2, 3) @ ember.ones(2, 3)
    with pytest.raises(ValueError):
        ember.ones(6).reshape(4, 2)


def test_dtype_and_value_errors_are_value_errors():
    with pytest.raises(ValueError):
        ember.ones(2) & ember.ones(2)  # bitwise and of floats
    with pytest.raises(ValueError):
        ember.arange(0, 5, 0)  # step 0
    with pytest.raises(ValueError):
        ember.ones(2).item()  # more than one element


def test_index_errors_are_index_errors():
    x = ember.zeros(2, 3)
    with pytest.raises(IndexError):
        x[2]
    with pytest.raises(IndexError):
        x[0, 0, 0]
    with pytest.raises(IndexError):
        x.sum(5)
    with pytest.raises(IndexError):
        x[..., ...]


def test_unsupported_operands_and_keys_are_type_errors():
    with pytest.raises(TypeError):
        ember.ones(2) + "a"
    with pytest.raises(TypeError):
        x = ember.ones(2)
        x[None]
    with pytest.raises(TypeError):
        ember.ones(2)[1.5]
