// Fits a small MLP to y = sin(3 x) with Adam; exits 0 when the loss fell at least tenfold.
#include <cstdio>

#include "ember/ember.h"

using namespace ember;

int main() {
  manual_seed(0);
  Tensor x = rand({256, 1}) * 2.0 - 1.0;  // 256 points in [-1, 1)
  Tensor y = (x * 3.0).sin();
  nn::Sequential net(nn::Linear(1, 32), nn::Tanh(), nn::Linear(32, 1));
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-2));
  float first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    Tensor loss = nn::functional::mse_loss(net->forward(x), y);
    opt.zero_grad();
    loss.backward();
    opt.step();
    last = loss.item<float>();
    if (step == 0) first = last;
  }
  std::printf("loss %.5f -> %.5f\n", first, last);
  return last < first / 10 ? 0 : 1;
}
