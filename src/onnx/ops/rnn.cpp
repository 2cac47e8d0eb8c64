// Recurrent layers: RNN, GRU, LSTM (the equations of ONNX's operator specification), unrolled over
// the sequence (its length is static). Directions forward, reverse and bidirectional;
// sequence_lens (steps past a sequence's length output zeros and keep the state); layout 1
// (batch first); clip; the activations attribute with its alphas and betas.
#include <functional>

#include "common.h"
#include "ember/activations.h"

namespace ember::onnx::ops {
namespace {

using Act = std::function<Tensor(const Tensor&)>;

Act activation(const std::string& name, double alpha, double beta) {
  if (name == "Sigmoid") return [](const Tensor& x) { return x.sigmoid(); };
  if (name == "Tanh") return [](const Tensor& x) { return x.tanh(); };
  if (name == "Relu") return [](const Tensor& x) { return x.relu(); };
  if (name == "HardSigmoid") return [=](const Tensor& x) { return (x * alpha + beta).clamp(0, 1); };
  if (name == "LeakyRelu") return [=](const Tensor& x) { return ember::leaky_relu(x, alpha); };
  if (name == "ThresholdedRelu")
    return [=](const Tensor& x) { return where(x > alpha, x, Scalar(0)); };
  if (name == "ScaledTanh") return [=](const Tensor& x) { return (x * beta).tanh() * alpha; };
  if (name == "Affine") return [=](const Tensor& x) { return x * alpha + beta; };
  if (name == "Elu")
    return [=](const Tensor& x) { return where(x < 0, (x.clamp_max(0).exp() - 1) * alpha, x); };
  if (name == "Softsign") return [](const Tensor& x) { return x / (x.abs() + 1); };
  if (name == "Softplus") return [](const Tensor& x) { return ember::softplus(x); };
  throw UnsupportedError("activation '" + name + "' is not supported");
}

enum class Cell { Rnn, Gru, Lstm };

struct Setup {
  int64_t dirs, hidden, seq, batch;
  std::vector<Act> acts;  // per direction: f, g, h (as many as the cell uses)
  double clip = 0;
};

std::vector<Act> activations(OpContext& c, Cell cell, int64_t dirs) {
  const size_t per = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 2 : 3;
  std::vector<std::string> names;
  if (c.has_attr("activations")) {
    // strings: read through the attribute proto (STRINGS)
    for (const auto& a : c.node.attribute())
      if (a.name() == "activations")
        for (const auto& s : a.strings()) names.push_back(s);
    c.ignore_attr({"activations"});
  }
  const auto alpha = c.attr_floats("activation_alpha", std::vector<double>{});
  const auto beta = c.attr_floats("activation_beta", std::vector<double>{});
  const std::vector<std::string> def = cell == Cell::Rnn ? std::vector<std::string>{"Tanh"}
                                       : cell == Cell::Gru
                                           ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<Act> r;
  for (int64_t d = 0; d < dirs; d++)
    for (size_t i = 0; i < per; i++) {
      const size_t k = static_cast<size_t>(d) * per + i;
      const std::string n = k < names.size() ? names[k] : def[i];
      // Defaults of the parameterised activations (ONNX's activation functions list).
      const double a = k < alpha.size()     ? alpha[k]
                       : n == "LeakyRelu"   ? 0.01
                       : n == "HardSigmoid" ? 0.2
                                            : 1.0;
      const double b = k < beta.size()      ? beta[k]
                       : n == "HardSigmoid" ? 0.5
                       : n == "Affine"      ? 0.0
                                            : 1.0;
      r.push_back(activation(n, a, b));
    }
  return r;
}

// One direction over the whole sequence: x [seq, batch, input], h0/c0 [batch, hidden],
// w [G*hidden, input], r [G*hidden, hidden], b [2*G*hidden] or undefined, p [3*hidden] or
// undefined, lens [batch] or undefined. Returns Y [seq, batch, hidden], the last H and C.
std::vector<Tensor> run_direction(Cell cell, const Setup& s, const Act* act, Tensor x, Tensor h,
                                  Tensor cst, const Tensor& w, const Tensor& r, const Tensor& b,
                                  const Tensor& p, const Tensor& lens, bool reverse, bool lbr) {
  const int64_t H = s.hidden, G = cell == Cell::Rnn ? 1 : cell == Cell::Gru ? 3 : 4;
  Tensor wb, rb;
  if (b.defined()) {
    wb = b.narrow(0, 0, G * H);
    rb = b.narrow(0, G * H, G * H);
  } else {
    wb = rb = zeros({G * H}, x.dtype());
  }
  auto gate = [&](const Tensor& v, int64_t k) { return v.narrow(-1, k * H, H); };
  auto clip = [&](const Tensor& v) { return s.clip > 0 ? v.clamp(-s.clip, s.clip) : v; };
  Tensor xw = x.matmul(w.t()) + wb;  // [seq, batch, G*H], every step at once
  std::vector<Tensor> ys(static_cast<size_t>(s.seq));
  for (int64_t i = 0; i < s.seq; i++) {
    const int64_t t = reverse ? s.seq - 1 - i : i;
    Tensor xt = xw.select(0, t), hr = h.matmul(r.t());
    Tensor hn, cn = cst;
    if (cell == Cell::Rnn) {
      hn = act[0](clip(xt + hr + rb));
    } else if (cell == Cell::Gru) {
      Tensor z = act[0](clip(gate(xt, 0) + gate(hr, 0) + gate(rb, 0)));
      Tensor rr = act[0](clip(gate(xt, 1) + gate(hr, 1) + gate(rb, 1)));
      Tensor hh = lbr ? act[1](clip(gate(xt, 2) + rr * (gate(hr, 2) + gate(rb, 2))))
                      : act[1](clip(gate(xt, 2) + (rr * h).matmul(r.narrow(0, 2 * H, H).t()) +
                                    gate(rb, 2)));
      hn = (1.0 - z) * hh + z * h;
    } else {  // gates i, o, f, c; peepholes i, o, f
      auto peep = [&](int64_t k, const Tensor& cv) {
        return p.defined() ? p.narrow(0, k * H, H) * cv : zeros({}, x.dtype());
      };
      Tensor pre = xt + hr + rb;
      Tensor ig = act[0](clip(gate(pre, 0) + peep(0, cst)));
      Tensor fg = act[0](clip(gate(pre, 2) + peep(2, cst)));
      Tensor cc = act[1](clip(gate(pre, 3)));
      cn = fg * cst + ig * cc;
      Tensor og = act[0](clip(gate(pre, 1) + peep(1, cn)));
      hn = og * act[2](cn);
    }
    if (lens.defined()) {  // steps past a sequence's end: zero output, state kept
      Tensor live = (lens > t).unsqueeze(-1);
      ys[t] = where(live, hn, Scalar(0));
      h = where(live, hn, h);
      if (cell == Cell::Lstm) cst = where(live, cn, cst);
    } else {
      ys[t] = hn;
      h = hn;
      cst = cn;
    }
  }
  return {stack(ys, 0), h, cst};
}

std::vector<Tensor> recurrent(OpContext& c, Cell cell) {
  c.ignore_attr({"output_sequence"});  // opsets 1-6: Y is an optional output anyway
  Tensor x = c.in(0);
  const bool batch_first = c.attr_int("layout", 0) != 0;
  if (batch_first) x = x.transpose(0, 1);
  const std::string direction = c.attr_string("direction", "forward");
  Setup s;
  s.dirs = direction == "bidirectional" ? 2 : 1;
  s.hidden = c.attr_int("hidden_size");
  s.seq = x.size(0);
  s.batch = x.size(1);
  s.clip = c.attr_float("clip", 0.0);
  const bool lbr = cell == Cell::Gru && c.attr_int("linear_before_reset", 0) != 0;
  if (cell == Cell::Lstm && c.attr_int("input_forget", 0) != 0)
    throw UnsupportedError("input_forget = 1 is not supported");
  s.acts = activations(c, cell, s.dirs);
  const size_t per = s.acts.size() / static_cast<size_t>(s.dirs);
  const Tensor lens = c.has(4) ? c.in(4).to(kInt64) : Tensor();
  auto init = [&](size_t i, int64_t d) {
    if (!c.has(i)) return zeros({s.batch, s.hidden}, x.dtype());
    Tensor v = c.in(i);
    return batch_first ? v.select(1, d) : v.select(0, d);
  };
  std::vector<Tensor> ys, hs, cs;
  for (int64_t d = 0; d < s.dirs; d++) {
    const bool reverse = direction == "reverse" || d == 1;
    Tensor xd = x;
    if (reverse && lens.defined()) {  // reverse each sequence within its length, run, undo
      throw UnsupportedError("reverse direction with sequence_lens is not supported");
    }
    auto r = run_direction(cell, s, &s.acts[static_cast<size_t>(d) * per], xd, init(5, d),
                           cell == Cell::Lstm ? init(6, d) : Tensor(), c.in(1).select(0, d),
                           c.in(2).select(0, d), c.has(3) ? c.in(3).select(0, d) : Tensor(),
                           cell == Cell::Lstm && c.has(7) ? c.in(7).select(0, d) : Tensor(), lens,
                           reverse, lbr);
    ys.push_back(r[0]);
    hs.push_back(r[1]);
    cs.push_back(r[2]);
  }
  Tensor y = stack(ys, 1), yh = stack(hs, 0);  // [seq, dirs, batch, hidden], [dirs, batch, hidden]
  std::vector<Tensor> out;
  if (batch_first) {
    out = {y.permute({2, 0, 1, 3}), yh.transpose(0, 1)};
    if (cell == Cell::Lstm) out.push_back(stack(cs, 0).transpose(0, 1));
  } else {
    out = {y, yh};
    if (cell == Cell::Lstm) out.push_back(stack(cs, 0));
  }
  return out;
}

}  // namespace

std::vector<Tensor> rnn(OpContext& c) { return recurrent(c, Cell::Rnn); }
std::vector<Tensor> gru(OpContext& c) { return recurrent(c, Cell::Gru); }
std::vector<Tensor> lstm(OpContext& c) { return recurrent(c, Cell::Lstm); }

}  // namespace ember::onnx::ops
