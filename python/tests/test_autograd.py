"""Gradients against PyTorch's autograd (Debian's python3-torch) on the same values."""
import numpy as np
import torch

import ember

rng = np.random.default_rng(1)
X = rng.standard_normal((4, 3)).astype(np.float32)
W = rng.standard_normal((3, 2)).astype(np.float32)


def test_backward_matches_torch():
    x = ember.tensor(X, requires_grad=True)
    w = ember.tensor(W, requires_grad=True)
    ((x @ w).tanh() * 3 - x.sum(1, keepdim=True)).mean().backward()

    tx = torch.tensor(X, requires_grad=True)
    tw = torch.tensor(W, requires_grad=True)
    ((tx @ tw).tanh() * 3 - tx.sum(1, keepdim=True)).mean().backward()

    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_backward_with_a_gradient_argument():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(ember.tensor([1.0, 0.5, -1.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, -6.0])  # 2 x g


def test_grad_is_none_before_backward_and_requires_grad_flags():
    x = ember.ones(2)
    assert not x.requires_grad and x.grad is None
    x.requires_grad = True
    assert x.requires_grad
    assert (x * 2).requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad


def test_detach_and_no_grad_stop_gradients():
    x = ember.ones(2, requires_grad=True)
    assert not x.detach().requires_grad
    with ember.no_grad():
        y = x * 2
        with ember.no_grad():
            pass
        z = x * 2  # still inside the outer block
    assert not y.requires_grad and not z.requires_grad
    assert (x * 2).requires_grad

    @ember.no_grad()
    def double(t):
        return t * 2

    assert not double(x).requires_grad
    assert (x * 2).requires_grad


def test_no_grad_is_left_when_the_block_raises():
    x = ember.ones(2, requires_grad=True)
    try:
        with ember.no_grad():
            raise KeyError("inside")
    except KeyError:
        pass
    assert (x * 2).requires_grad
