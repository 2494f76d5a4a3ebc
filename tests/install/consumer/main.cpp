// Checks that the umbrella header and target work: d/dx sum(tanh(x)) at 0.5.
#include <cmath>
#include <cstdio>

#include "gradiens.h"

int main() {
  auto x = gradiens::full({2, 2}, 0.5, gradiens::kFloat64).requires_grad_();
  gradiens::tanh(x).sum().backward();
  double got = x.grad()[1][1].item<double>();
  double want = 1 - std::tanh(0.5) * std::tanh(0.5);
  std::printf("consumer: %.12f (expected %.12f)\n", got, want);
  return std::abs(got - want) < 1e-12 ? 0 : 1;
}
