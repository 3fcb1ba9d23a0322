// Uses gradring exactly as an outside program would: one include, one target, the installed
// (public) headers only.
#include <gradring/gradring.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>

int main() {
  gr::Tensor w = gr::tensor({1.0, 2.0, 3.0}, gr::TensorOptions(gr::kFloat64).requires_grad(true));
  gr::Tensor loss = (w * w).sum();
  loss.backward();
  double g = w.grad()[2].item<double>();  // d/dw3 of sum(w^2) = 2 * 3
  std::cout << "consumer: gradring " << gr::kVersion << ", grad " << g << "\n";

  // The distributed API: a one-rank group, DistributedDataParallel, one backward.
  namespace dist = gr::distributed;
  dist::InitOptions o;
  o.backend = "gloo";
  o.init_method = "file://" + (std::filesystem::temp_directory_path() /
                               ("gradring_consumer_" + std::to_string(::getpid()))).string();
  o.rank = 0;
  o.world_size = 1;
  dist::init_process_group(o);
  gr::nn::Linear linear(3, 1);
  gr::nn::parallel::DistributedDataParallel ddp(linear, dist::default_group());
  ddp(gr::ones({2, 3})).sum().backward();
  const double dw = linear->weight.grad()[0][0].item<double>();  // two rows of ones
  std::cout << "consumer: DDP on " << dist::get_world_size() << " rank, grad " << dw << "\n";
  dist::destroy_process_group();
  return g == 6.0 && dw == 2.0 ? 0 : 1;
}
