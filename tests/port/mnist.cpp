// An MNIST trainer written against libtorch's C++ API only, as libtorch's users write one
// (after pytorch/examples cpp/mnist): torch::data's MNIST dataset, Normalize and Stack
// transforms, make_data_loader, a small convolutional net and SGD. tests/port/port.sh
// renames it for gradring. With PORT_COMPARE=1 it runs without library randomness and
// prints every step's loss (port_compare.h). Usage: mnist <folder of MNIST IDX files> [epochs]
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "port_compare.h"

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 10, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(10, 20, /*kernel_size=*/5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));
    x = torch::relu(torch::max_pool2d(conv2->forward(x), 2));
    x = x.view({-1, 320});
    x = torch::relu(fc1->forward(x));
    x = torch::dropout(x, /*p=*/port_compare::enabled() ? 0.0 : 0.5, /*train=*/is_training());
    x = fc2->forward(x);
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

// One epoch; returns the mean training loss.
template <typename DataLoader>
double train(size_t epoch, Net& model, torch::Device device, DataLoader& data_loader, torch::optim::Optimizer& optimizer,
             size_t dataset_size) {
  model.train();
  double loss_sum = 0;
  size_t batches = 0, seen = 0;
  for (auto& batch : data_loader) {
    // Comparing: the first batches only (the loader must still run to its end, as libtorch's
    // refuses a new iterator before).
    if (port_compare::enabled() && batches == port_compare::kBatchesPerEpoch) continue;
    auto data = batch.data.to(device), targets = batch.target.to(device);
    optimizer.zero_grad();
    auto output = model.forward(data);
    auto loss = torch::nll_loss(output, targets);
    TORCH_CHECK(!std::isnan(loss.template item<float>()), "the loss is NaN at epoch ", epoch);
    loss.backward();
    optimizer.step();
    loss_sum += loss.template item<float>();
    port_compare::print_loss(std::to_string(epoch) + "." + std::to_string(batches), loss.template item<float>());
    ++batches;
    seen += batch.data.size(0);
  }
  std::printf("Train Epoch: %zu [%zu/%zu] mean loss: %.4f\n", epoch, seen, dataset_size, loss_sum / batches);
  return loss_sum / batches;
}

// Returns the accuracy on the test set.
template <typename DataLoader>
double test(Net& model, torch::Device device, DataLoader& data_loader, size_t dataset_size) {
  torch::NoGradGuard no_grad;
  model.eval();
  double test_loss = 0;
  int64_t correct = 0;
  for (const auto& batch : data_loader) {
    auto data = batch.data.to(device), targets = batch.target.to(device);
    auto output = model.forward(data);
    test_loss += torch::nll_loss(output, targets, /*weight=*/{}, torch::Reduction::Sum).template item<float>();
    auto pred = output.argmax(1);
    correct += pred.eq(targets).sum().template item<int64_t>();
  }
  test_loss /= dataset_size;
  port_compare::print_loss("test", test_loss);
  const double accuracy = static_cast<double>(correct) / dataset_size;
  std::printf("Test set: Average loss: %.4f | Accuracy: %.3f\n", test_loss, accuracy);
  return accuracy;
}

int main(int argc, char** argv) {
  TORCH_CHECK(argc >= 2, "usage: ", argv[0], " <folder of MNIST IDX files> [epochs]");
  const std::string data_root = argv[1];
  const size_t epochs = argc > 2 ? std::stoul(argv[2]) : 5;
  torch::manual_seed(1);
  torch::Device device(torch::kCPU);

  Net model;
  model.to(device);
  if (port_compare::enabled()) port_compare::fix_parameters(model);

  auto train_dataset = torch::data::datasets::MNIST(data_root)
                           .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                           .map(torch::data::transforms::Stack<>());
  const size_t train_dataset_size = train_dataset.size().value();
  const auto train_options = torch::data::DataLoaderOptions().batch_size(64).workers(2);

  auto test_dataset = torch::data::datasets::MNIST(data_root, torch::data::datasets::MNIST::Mode::kTest)
                          .map(torch::data::transforms::Normalize<>(0.1307, 0.3081))
                          .map(torch::data::transforms::Stack<>());
  const size_t test_dataset_size = test_dataset.size().value();
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(test_dataset), 100);

  torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(0.05).momentum(0.5));

  double first_loss = 0, last_loss = 0;
  auto train_epochs = [&](auto& train_loader) {
    for (size_t epoch = 1; epoch <= epochs; ++epoch) {
      last_loss = train(epoch, model, device, *train_loader, optimizer, train_dataset_size);
      if (epoch == 1) first_loss = last_loss;
    }
  };
  if (port_compare::enabled()) {  // the same batches in both libraries
    auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(train_dataset),
                                                                                         train_options);
    train_epochs(loader);
  } else {
    auto loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(std::move(train_dataset),
                                                                                      train_options);
    train_epochs(loader);
  }
  const double accuracy = test(model, device, *test_loader, test_dataset_size);
  if (port_compare::enabled()) return EXIT_SUCCESS;
  TORCH_CHECK(last_loss < first_loss, "training did not lower the loss: ", first_loss, " -> ", last_loss);
  TORCH_CHECK(accuracy > 0.5, "test accuracy ", accuracy, " after ", epochs, " epochs");
  return EXIT_SUCCESS;
}
