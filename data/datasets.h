// torch::data::datasets: the dataset interfaces, .map(), and gradring's readers (MNIST and
// Fashion-MNIST, CIFAR-10, TensorDataset, TokenDataset), as torch/data/datasets.h.
#pragma once

#include "data/datasets/base.h"
#include "data/datasets/cifar10.h"
#include "data/datasets/map.h"
#include "data/datasets/mnist.h"
#include "data/datasets/tensor.h"
#include "data/datasets/tokens.h"
