// Uses gradring exactly as an outside program would: one include, one target.
#include <gradring/gradring.h>

#include <iostream>

int main() {
  gr::Tensor w = gr::tensor({1.0, 2.0, 3.0}, gr::TensorOptions(gr::kFloat64).requires_grad(true));
  gr::Tensor loss = (w * w).sum();
  loss.backward();
  double g = w.grad()[2].item<double>();  // d/dw3 of sum(w^2) = 2 * 3
  std::cout << "consumer: gradring " << gr::kVersion << ", grad " << g << "\n";
  return g == 6.0 ? 0 : 1;
}
