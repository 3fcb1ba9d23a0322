// ResNet-18 (torchvision's layout: 7x7/2 stem, 3x3/2 max-pool, four stages of two BasicBlocks
// with 64-128-256-512 channels, batch norm, residual adds, global average pool, fc) for small
// inputs such as 3x32x32: about 11.2 M parameters (45 MB of float32 gradients) but little
// compute per image, so data-parallel training is communication-heavy. Parameter names match
// torchvision.models.resnet18.
#pragma once

#include <gradring/gradring.h>

namespace gr::apps {

inline nn::Conv2d conv_no_bias(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// Two 3x3 convolutions with batch norm; the shortcut is a strided 1x1 convolution + batch
// norm when the shape changes.
class BasicBlockImpl : public nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : nn::Module("BasicBlock"),
        conv1(register_module("conv1", conv_no_bias(in, out, 3, stride, 1))),
        bn1(register_module("bn1", nn::BatchNorm2d(out))),
        conv2(register_module("conv2", conv_no_bias(out, out, 3, 1, 1))),
        bn2(register_module("bn2", nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) {
      downsample = register_module("downsample", nn::Sequential(conv_no_bias(in, out, 1, stride, 0), nn::BatchNorm2d(out)));
    }
  }

  // x [N, in, H, W] -> [N, out, H / stride, W / stride]
  Tensor forward(const Tensor& x) {
    Tensor h = bn1(conv1(x)).relu_();
    h = bn2(conv2(h));
    return (h + (downsample ? downsample(x) : x)).relu_();
  }

  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Conv2d conv2;
  nn::BatchNorm2d bn2;
  nn::Sequential downsample{nullptr};
};
GR_MODULE(BasicBlock);

class ResNet18Impl : public nn::Module {
 public:
  explicit ResNet18Impl(int64_t in_channels = 3, int64_t classes = 10)
      : nn::Module("ResNet18"),
        conv1(register_module("conv1", conv_no_bias(in_channels, 64, 7, 2, 3))),
        bn1(register_module("bn1", nn::BatchNorm2d(64))),
        layer1(register_module("layer1", nn::Sequential(BasicBlock(64, 64, 1), BasicBlock(64, 64, 1)))),
        layer2(register_module("layer2", nn::Sequential(BasicBlock(64, 128, 2), BasicBlock(128, 128, 1)))),
        layer3(register_module("layer3", nn::Sequential(BasicBlock(128, 256, 2), BasicBlock(256, 256, 1)))),
        layer4(register_module("layer4", nn::Sequential(BasicBlock(256, 512, 2), BasicBlock(512, 512, 1)))),
        fc(register_module("fc", nn::Linear(512, classes))) {}

  // x [N, in_channels, H, W] (H, W >= 32) -> log-probabilities [N, classes]
  Tensor forward(const Tensor& x) {
    Tensor h = bn1(conv1(x)).relu_();
    h = max_pool2d(h, {3, 3}, {2, 2}, {1, 1});
    h = layer4(layer3(layer2(layer1(h))));
    h = adaptive_avg_pool2d(h, {1, 1}).flatten(1);
    return log_softmax(fc(h), 1);
  }

  nn::Conv2d conv1;
  nn::BatchNorm2d bn1;
  nn::Sequential layer1, layer2, layer3, layer4;
  nn::Linear fc;
};
GR_MODULE(ResNet18);

}  // namespace gr::apps
