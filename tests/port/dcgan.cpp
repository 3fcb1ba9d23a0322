// A DCGAN written against libtorch's C++ API only, as libtorch's users write one (after
// pytorch/examples cpp/dcgan): a generator of ConvTranspose2d + BatchNorm2d + ReLU layers and
// Tanh from a noise vector to a 28x28 image, a Sequential discriminator of Conv2d + LeakyReLU
// layers and Sigmoid, BCELoss, two Adam optimizers with betas (0.5, 0.999), and the
// generator's fake batch detached for the discriminator's step. tests/port/port.sh renames it
// for gradring. With PORT_COMPARE=1 it runs without library randomness (fixed noise, labels and
// initial weights, sequential batches) and prints every step's losses (port_compare.h).
// Usage: dcgan <folder of MNIST IDX files> [steps]
#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>

#include "port_compare.h"

// The size of the noise vector fed to the generator.
const int64_t kNoiseSize = 100;
const int64_t kBatchSize = 32;

struct DCGANGeneratorImpl : torch::nn::Module {
  DCGANGeneratorImpl(int kNoiseSize)
      : conv1(torch::nn::ConvTranspose2dOptions(kNoiseSize, 256, 4).bias(false)),
        batch_norm1(256),
        conv2(torch::nn::ConvTranspose2dOptions(256, 128, 3).stride(2).padding(1).bias(false)),
        batch_norm2(128),
        conv3(torch::nn::ConvTranspose2dOptions(128, 64, 4).stride(2).padding(1).bias(false)),
        batch_norm3(64),
        conv4(torch::nn::ConvTranspose2dOptions(64, 1, 4).stride(2).padding(1).bias(false)) {
    // register_module() is needed if we want to use the parameters() method later on
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv3", conv3);
    register_module("conv4", conv4);
    register_module("batch_norm1", batch_norm1);
    register_module("batch_norm2", batch_norm2);
    register_module("batch_norm3", batch_norm3);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(batch_norm1(conv1(x)));  // 1x1 -> 4x4
    x = torch::relu(batch_norm2(conv2(x)));  // -> 7x7
    x = torch::relu(batch_norm3(conv3(x)));  // -> 14x14
    x = torch::tanh(conv4(x));               // -> 28x28
    return x;
  }

  torch::nn::ConvTranspose2d conv1, conv2, conv3, conv4;
  torch::nn::BatchNorm2d batch_norm1, batch_norm2, batch_norm3;
};
TORCH_MODULE(DCGANGenerator);

int main(int argc, char** argv) {
  TORCH_CHECK(argc >= 2, "usage: ", argv[0], " <folder of MNIST IDX files> [steps]");
  const std::string data_root = argv[1];
  const int64_t steps = argc > 2 ? std::stol(argv[2]) : 10;
  torch::manual_seed(1);
  torch::Device device(torch::kCPU);

  DCGANGenerator generator(kNoiseSize);
  generator->to(device);

  torch::nn::Sequential discriminator(
      // Layer 1
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 64, 4).stride(2).padding(1).bias(false)),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 2
      torch::nn::Conv2d(torch::nn::Conv2dOptions(64, 128, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(128),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 3
      torch::nn::Conv2d(torch::nn::Conv2dOptions(128, 256, 4).stride(2).padding(1).bias(false)),
      torch::nn::BatchNorm2d(256),
      torch::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
      // Layer 4
      torch::nn::Conv2d(torch::nn::Conv2dOptions(256, 1, 3).stride(1).padding(0).bias(false)),
      torch::nn::Sigmoid());
  discriminator->to(device);
  const bool compare = port_compare::enabled();
  if (compare) {
    port_compare::fix_parameters(*generator);
    port_compare::fix_parameters(*discriminator);
  }

  // Images scaled to [-1, 1], the range of the generator's tanh.
  auto dataset = torch::data::datasets::MNIST(data_root)
                     .map(torch::data::transforms::Normalize<>(0.5, 0.5))
                     .map(torch::data::transforms::Stack<>());
  const auto loader_options = torch::data::DataLoaderOptions().batch_size(kBatchSize).workers(2).drop_last(true);

  torch::optim::Adam generator_optimizer(generator->parameters(),
                                         torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999)));
  torch::optim::Adam discriminator_optimizer(discriminator->parameters(),
                                             torch::optim::AdamOptions(2e-4).betas(std::make_tuple(0.5, 0.999)));
  torch::nn::BCELoss criterion;

  // A fixed noise batch: how its images change says whether the generator learns anything.
  torch::Tensor fixed_noise =
      compare ? port_compare::fixed_values({8, kNoiseSize, 1, 1}, 1, 1.7) : torch::randn({8, kNoiseSize, 1, 1}, device);
  torch::Tensor first_samples;
  {
    torch::NoGradGuard no_grad;
    generator->eval();
    first_samples = generator->forward(fixed_noise);
    generator->train();
  }
  TORCH_CHECK(first_samples.sizes() == torch::IntArrayRef({8, 1, 28, 28}), "generator output ", first_samples.sizes());

  int64_t step = 0;
  double first_d_loss = 0, last_d_loss = 0;
  auto train = [&](auto& data_loader) {
    while (step < steps) {
      for (torch::data::Example<>& batch : *data_loader) {
        if (step == steps) break;
        // Train discriminator with real images.
        discriminator->zero_grad();
        torch::Tensor real_images = batch.data.to(device);
        torch::Tensor real_labels = compare ? port_compare::fixed_values({batch.data.size(0)}, 2 * step + 2, 0.1) + 0.9
                                            : torch::empty(batch.data.size(0), device).uniform_(0.8, 1.0);
        torch::Tensor real_output = discriminator->forward(real_images).reshape(real_labels.sizes());
        torch::Tensor d_loss_real = criterion(real_output, real_labels);
        d_loss_real.backward();

        // Train discriminator with fake images.
        const int64_t n = batch.data.size(0);
        torch::Tensor noise = compare ? port_compare::fixed_values({n, kNoiseSize, 1, 1}, 2 * step + 3, 1.7)
                                      : torch::randn({n, kNoiseSize, 1, 1}, device);
        torch::Tensor fake_images = generator->forward(noise);
        torch::Tensor fake_labels = torch::zeros(batch.data.size(0), device);
        torch::Tensor fake_output = discriminator->forward(fake_images.detach()).reshape(fake_labels.sizes());
        torch::Tensor d_loss_fake = criterion(fake_output, fake_labels);
        d_loss_fake.backward();

        torch::Tensor d_loss = d_loss_real + d_loss_fake;
        discriminator_optimizer.step();

        // Train generator.
        generator->zero_grad();
        fake_labels.fill_(1);
        fake_output = discriminator->forward(fake_images).reshape(fake_labels.sizes());
        torch::Tensor g_loss = criterion(fake_output, fake_labels);
        g_loss.backward();
        generator_optimizer.step();

        const double d = d_loss.item<float>(), g = g_loss.item<float>();
        std::printf("[%2lld/%2lld] D_loss: %.4f | G_loss: %.4f\n", static_cast<long long>(step + 1),
                    static_cast<long long>(steps), d, g);
        TORCH_CHECK(std::isfinite(d) && std::isfinite(g), "a loss is not finite at step ", step + 1);
        port_compare::print_loss(std::to_string(step + 1) + ".D", d);
        port_compare::print_loss(std::to_string(step + 1) + ".G", g);
        if (step == 0) first_d_loss = d;
        last_d_loss = d;
        ++step;
      }
    }
  };
  if (compare) {  // the same batches in both libraries
    auto loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(std::move(dataset),
                                                                                         loader_options);
    train(loader);
  } else {
    auto loader = torch::data::make_data_loader<torch::data::samplers::RandomSampler>(std::move(dataset),
                                                                                      loader_options);
    train(loader);
  }

  if (compare) return EXIT_SUCCESS;
  torch::NoGradGuard no_grad;
  generator->eval();
  torch::Tensor samples = generator->forward(fixed_noise);
  const double change = (samples - first_samples).abs().max().item<float>();
  std::printf("D_loss %.4f -> %.4f; fixed-noise samples moved by up to %.4f\n", first_d_loss, last_d_loss, change);
  // The discriminator learns to tell the data from the untrained generator's output first.
  TORCH_CHECK(last_d_loss < first_d_loss - 0.05, "the discriminator's loss did not fall: ", first_d_loss, " -> ",
              last_d_loss);
  TORCH_CHECK(change > 1e-3, "the generator's samples did not change in ", steps, " steps");
  TORCH_CHECK(samples.abs().max().item<float>() <= 1.0f, "tanh output out of [-1, 1]");
  return EXIT_SUCCESS;
}
