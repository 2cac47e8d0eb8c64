"""ember.jit: a jitted function equals the eager one on new inputs, replays its capture (counted
by the C++ jit's calls and replays), reads parameters' current values, and reports misuse."""
import numpy as np
import pytest

import ember
from ember import nn


def actor_and_input(seed=0):
    ember.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2))
    return model, ember.randn(4, 8)


def test_jitted_function_equals_eager_on_new_inputs_and_replays():
    model, _ = actor_and_input()
    eager_calls = []

    def forward(x, scale):
        eager_calls.append(1)  # Python code runs only on the calls that are not replays
        return (model(x) * scale).tanh()

    fast = ember.jit(forward)
    rng = np.random.default_rng(1)
    for i in range(5):
        x = ember.tensor(rng.standard_normal((4, 8)).astype(np.float32))
        s = ember.tensor(rng.uniform(0.5, 2.0, (1, 2)).astype(np.float32))
        got = fast(x, s).detach().numpy()
        with ember.no_grad():
            want = forward(x, s).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    assert fast.calls == 5 and fast.replays == 3 and fast.captured_launches > 0
    assert len(eager_calls) == 2 + 5  # run, capture; plus the five eager references


def test_replay_reads_parameters_updated_in_place():
    model, x = actor_and_input(2)
    fast = ember.jit(lambda t: model(t))
    with ember.no_grad():
        for _ in range(3):
            fast(x)
        model[0].weight *= 0.5  # an optimizer-style in-place update: the buffer is kept
        np.testing.assert_allclose(fast(x).numpy(), model(x).numpy(), rtol=1e-6, atol=1e-6)
    assert fast.replays >= 2


def test_tuple_outputs_numpy_inputs_and_methods():
    fast = ember.jit(lambda a, b: (a + b, a * b))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for _ in range(3):
        s, p = fast(a, a)
    assert s.tolist() == (a + a).tolist() and p.tolist() == (a * a).tolist()

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        @ember.jit
        def act(self, x):
            return self.fc(x)

    m1, m2 = Actor(), Actor()
    x = ember.ones(2, 3)
    with ember.no_grad():
        for _ in range(3):
            assert m1.act(x).tolist() == m1.fc(x).tolist()
            assert m2.act(x).tolist() == m2.fc(x).tolist()
    assert m1.act.replays == 1 and m1.act is not m2.act


def test_signature_change_and_misuse_raise():
    fast = ember.jit(lambda x: x + 1)
    for _ in range(2):
        fast(ember.ones(2))
    with pytest.raises(ValueError, match="captured"):
        fast(ember.ones(3))
    fast.reset()
    assert fast(ember.ones(3)).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError):
        fast(x=ember.ones(2))
    with pytest.raises(TypeError):
        ember.jit(lambda x: 3)(ember.ones(1))
    with pytest.raises(TypeError, match="got int 5"):  # at the wrap, not the first call
        ember.jit(5)

    def reads_data(x):
        return x * x.sum().item()

    bad = ember.jit(reads_data)
    bad(ember.ones(2))
    with pytest.raises(RuntimeError, match="reading tensor data"):
        bad(ember.ones(2))


def test_python_exception_passes_through():
    def fails(x):
        raise KeyError("from the function")

    with pytest.raises(KeyError, match="from the function"):
        ember.jit(fails)(ember.ones(1))


# Every way Python reads a tensor's data: each raises inside a capture, as item() does (a value
# read once would be frozen into the replays, e.g. a branch on it).
DATA_READS = {
    "item": lambda t: t.sum().item(),
    "numpy": lambda t: t.numpy(),
    "tolist": lambda t: t.tolist(),
    "asarray": lambda t: np.asarray(t),
    "dlpack": lambda t: t.__dlpack__(),
    "float": lambda t: float(t.sum()),
    "int": lambda t: int(t.sum()),
    "bool": lambda t: bool(t.sum() > 5),
    "repr": lambda t: repr(t),
}


@pytest.mark.parametrize("read", DATA_READS.values(), ids=DATA_READS.keys())
def test_every_data_read_inside_a_capture_raises(read):
    def branches(a):
        y = a * 2
        read(y)
        return y

    fast = ember.jit(branches)
    assert fast(ember.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]  # the eager call may read
    with pytest.raises(RuntimeError, match="reading tensor data"):
        fast(ember.tensor([1.0, 2.0]))  # the capture may not


def test_data_dependent_branch_raises_instead_of_replaying_one_branch():
    h = ember.jit(lambda a: a * 2 if a.numpy()[0] > 5 else a * 3)
    assert h(ember.tensor([1.0, 2.0])).tolist() == [3.0, 6.0]
    with pytest.raises(RuntimeError, match="reading tensor data"):
        h(ember.tensor([1.0, 2.0]))


def test_outputs_never_require_grad():
    ember.manual_seed(0)
    w = ember.randn(2, requires_grad=True)
    a = ember.tensor([1.0, 2.0])
    gr = ember.jit(lambda a: (a * w).sum())
    expected = (a * w.detach()).sum().item()
    for _ in range(4):  # eager, capture, replays: the same every call
        y = gr(a)
        assert not y.requires_grad
        assert y.item() == pytest.approx(expected, rel=1e-6)
        with pytest.raises(RuntimeError):
            y.backward()
    assert gr.replays == 2
