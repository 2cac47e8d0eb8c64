"""ember.nn and ember.optim from Python: a tiny regression's gradients and one Adam step against
the same arithmetic in NumPy (float64), an SGD trajectory, module naming and state dicts, a
two-layer network's gradients against torch's, save/load round trips read back by a NumPy
safetensors reader, and errors."""
import json
import struct

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn import functional as F

try:
    import torch
except ImportError:
    torch = None


def regression_data():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0], [0.5]], np.float32) + 0.25).astype(np.float32)
    return x, y


def mse_grads(w, b, x, y):
    """d/dW, d/db of mean((x W^T + b - y)^2), in float64."""
    r = x.astype(np.float64) @ w.T.astype(np.float64) + b.astype(np.float64) - y
    return 2.0 / r.size * (r.T @ x), 2.0 / r.size * r.sum(axis=0), (r ** 2).mean()


def test_linear_regression_gradients_and_one_adam_step_match_numpy():
    ember.manual_seed(0)
    model = nn.Linear(3, 1)
    bound = 1 / np.sqrt(3)  # kaiming_uniform_(a = sqrt 5): U(-1/sqrt(in), 1/sqrt(in))
    w0, b0 = model.weight.detach().numpy().copy(), model.bias.detach().numpy().copy()
    assert np.all(np.abs(w0) <= bound) and np.all(np.abs(b0) <= bound)
    x, y = regression_data()
    loss = F.mse_loss(model(ember.from_numpy(x)), ember.from_numpy(y))
    loss.backward()
    gw, gb, value = mse_grads(w0, b0, x, y)
    assert loss.item() == pytest.approx(value, rel=1e-5)
    np.testing.assert_allclose(model.weight.grad.numpy(), gw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.bias.grad.numpy(), gb, rtol=1e-5, atol=1e-6)

    lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
    opt = ember.optim.Adam(model.parameters(), lr=lr, betas=(b1, b2), eps=eps)
    weight_buffer = model.weight.data_ptr()
    opt.step()
    for p0, g, p in ((w0, gw, model.weight), (b0, gb, model.bias)):
        m = (1 - b1) * g  # Kingma & Ba, Algorithm 1, t = 1, m0 = v0 = 0
        v = (1 - b2) * g * g
        expected = p0 - lr / (1 - b1) * m / (np.sqrt(v) / np.sqrt(1 - b2) + eps)
        np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert model.weight.data_ptr() == weight_buffer  # updated in place
    opt.zero_grad()
    assert model.weight.grad is None and model.bias.grad is None


def test_sgd_trains_the_regression_along_numpy_s_trajectory():
    ember.manual_seed(1)
    model = nn.Linear(3, 1)
    w, b = model.weight.detach().numpy().astype(np.float64), model.bias.detach().numpy()
    b = b.astype(np.float64)
    x, y = regression_data()
    xt, yt = ember.from_numpy(x), ember.from_numpy(y)
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    first = None
    for step in range(60):
        opt.zero_grad()
        loss = F.mse_loss(model(xt), yt)
        loss.backward()
        opt.step()
        gw, gb, value = mse_grads(w, b, x, y)
        assert loss.item() == pytest.approx(value, rel=1e-4, abs=1e-6), step
        w, b = w - 0.1 * gw, b - 0.1 * gb
        first = first or value
    np.testing.assert_allclose(model.weight.detach().numpy(), w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(model.bias.detach().numpy(), b, rtol=1e-4, atol=1e-5)
    assert mse_grads(w, b, x, y)[2] < 1e-3 * first


def test_module_names_state_dict_and_modes():
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.5), nn.Linear(8, 2, bias=False))
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias", "3.weight"]
    assert list(model.state_dict()) == ["0.weight", "0.bias", "3.weight"]
    assert model.state_dict()["3.weight"].shape == (2, 8)
    assert len(list(model.parameters())) == 3 and len(model) == 4
    assert isinstance(model[1], nn.Tanh) and model.training
    model.eval()
    assert not model[2].training
    x = ember.ones(5, 4)
    np.testing.assert_array_equal(model(x).detach().numpy(), model(x).detach().numpy())  # no dropout

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(2, 3)
            self.scale = nn.Parameter(ember.ones(3))
            self.register_buffer("count", ember.zeros(1))

        def forward(self, x):
            return self.body(x) * self.scale

    net = Net()
    # The C++ Module's order (ember::save's): own parameters, the children's, then buffers.
    assert list(net.state_dict()) == ["scale", "body.weight", "body.bias", "count"]
    assert [n for n, _ in net.named_buffers()] == ["count"]
    assert net(ember.ones(4, 2)).shape == (4, 3)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed (python3-torch)")
def test_mlp_gradients_match_torch():
    ember.manual_seed(2)
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))
    ref = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3))
    ref.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                         for k, v in model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
    target = np.arange(6) % 3
    loss = F.cross_entropy(model(ember.from_numpy(x)), ember.from_numpy(target))
    ref_loss = torch.nn.functional.cross_entropy(ref(torch.from_numpy(x)),
                                                 torch.from_numpy(target))
    loss.backward()
    ref_loss.backward()
    assert loss.item() == pytest.approx(ref_loss.item(), rel=1e-5)
    for (name, p), q in zip(model.named_parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=name)


def read_safetensors(path):
    """A reader written from the format's description: an 8-byte little-endian header size, a
    JSON header (name -> dtype, shape, data_offsets), then the data."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    dtypes = {"F32": np.float32, "F64": np.float64, "I64": np.int64}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        lo, hi = e["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + lo:8 + n + hi], dtypes[e["dtype"]]).reshape(
            e["shape"])
    return out, header.get("__metadata__", {})


def test_save_load_round_trip(tmp_path):
    ember.manual_seed(4)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    path = tmp_path / "model.safetensors"
    ember.save(model, path, metadata={"epoch": "3"})
    on_disk, meta = read_safetensors(path)
    assert meta == {"epoch": "3"}
    for name, t in model.state_dict().items():
        np.testing.assert_array_equal(on_disk[name], t.numpy())
    other = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    buffer = other[0].weight.data_ptr()
    opt = ember.optim.SGD(other.parameters(), lr=0.5)
    other.load_state_dict(ember.load(path))
    assert other[0].weight.data_ptr() == buffer  # loaded in place
    np.testing.assert_array_equal(other[0].weight.detach().numpy(), model[0].weight.detach().numpy())
    x = ember.randn(2, 3)
    np.testing.assert_array_equal(other(x).detach().numpy(), model(x).detach().numpy())
    other(x).sum().backward()
    opt.step()  # the optimizer still holds the loaded parameters
    g = other[0].bias.grad.numpy()
    np.testing.assert_allclose(other[0].bias.detach().numpy(),
                               model[0].bias.detach().numpy() - 0.5 * g, rtol=1e-6)
    ember.save({"a": ember.arange(3)}, tmp_path / "d.safetensors")
    assert ember.load(tmp_path / "d.safetensors")["a"].tolist() == [0, 1, 2]


def test_errors():
    with pytest.raises(ValueError, match="last dim 3"):
        nn.Linear(3, 2)(ember.ones(2, 4))
    with pytest.raises(ValueError, match="positive"):
        nn.Linear(0, 2)
    with pytest.raises(ValueError, match="empty parameter list"):
        ember.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="learning rate"):
        ember.optim.Adam(nn.Linear(2, 2).parameters(), lr=-1.0)
    with pytest.raises(TypeError, match="groups"):
        ember.optim.SGD([{"params": []}], lr=0.1)
    model = nn.Linear(2, 2)
    with pytest.raises(KeyError, match="missing"):
        model.load_state_dict({"weight": ember.zeros(2, 2)})
    with pytest.raises(ValueError, match="shape"):
        model.load_state_dict({"weight": ember.zeros(3, 2), "bias": ember.zeros(2)})
    with pytest.raises(OSError):
        ember.load("/nonexistent/model.safetensors")
    with pytest.raises(ValueError):
        F.cross_entropy(ember.zeros(2, 3), ember.tensor([0, 1]), reduction="bogus")


def test_optimizer_state_round_trip_resumes_training_exactly(tmp_path):
    x, y = regression_data()
    xt, yt = ember.from_numpy(x), ember.from_numpy(y)

    def run(model, opt, steps):
        for _ in range(steps):
            opt.zero_grad()
            F.mse_loss(model(xt), yt).backward()
            opt.step()

    ember.manual_seed(5)
    a = nn.Linear(3, 1)
    opt_a = ember.optim.Adam(a.parameters(), lr=0.03)
    run(a, opt_a, 3)
    ember.save(a, tmp_path / "m.safetensors")
    ember.save(opt_a, tmp_path / "o.safetensors")
    state = ember.load(tmp_path / "o.safetensors")
    assert set(state) == {"0.exp_avg", "0.exp_avg_sq", "1.exp_avg", "1.exp_avg_sq", "steps"}
    assert float(state.metadata["lr"]) == 0.03 and state["steps"].tolist() == [3.0, 3.0]

    b = nn.Linear(3, 1)
    opt_b = ember.optim.Adam(b.parameters(), lr=0.5)
    b.load_state_dict(ember.load(tmp_path / "m.safetensors"))
    opt_b.load_state_dict(state)
    assert opt_b.lr == 0.03
    run(a, opt_a, 2)
    run(b, opt_b, 2)
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy(), err_msg=name)
    with pytest.raises(KeyError):
        opt_b.load_state_dict({"steps": ember.zeros(2)})
