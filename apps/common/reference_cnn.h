// The reference CNN of the DDP tutorials (and PyTorch's MNIST example with batch norm):
// conv(1->32) bn relu pool, conv(32->64) bn relu pool, fc(1600->128) relu, fc(128->10),
// log_softmax. Parameter names match the PyTorch peer in bench/train_mnist_torch.py.
#pragma once

#include <gradring/gradring.h>

namespace gr::apps {

class ReferenceCNNImpl : public nn::Module {
 public:
  ReferenceCNNImpl()
      : nn::Module("ReferenceCNN"),
        conv1(register_module("conv1", nn::Conv2d(1, 32, 3))),
        bn1(register_module("bn1", nn::BatchNorm2d(32))),
        conv2(register_module("conv2", nn::Conv2d(32, 64, 3))),
        bn2(register_module("bn2", nn::BatchNorm2d(64))),
        fc1(register_module("fc1", nn::Linear(1600, 128))),
        fc2(register_module("fc2", nn::Linear(128, 10))) {}

  // x [N, 1, 28, 28] -> log-probabilities [N, 10]
  Tensor forward(const Tensor& x) {
    Tensor h = max_pool2d(bn1->forward(conv1->forward(x)).relu_(), 2);
    h = max_pool2d(bn2->forward(conv2->forward(h)).relu_(), 2);
    h = fc1->forward(h.flatten(1)).relu_();
    return log_softmax(fc2->forward(h), 1);
  }

  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Linear fc1, fc2;
};
GR_MODULE(ReferenceCNN);

}  // namespace gr::apps
