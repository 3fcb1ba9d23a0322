// The CIFAR-10 binary reader: data_batch_1..5.bin (train) and test_batch.bin are each a
// sequence of records of 1 label byte + 3072 pixel bytes (R, G, B planes of 32x32). The
// dataset over a folder of them is datasets::CIFAR10 (data/datasets/cifar10.h).
#pragma once

#include <string>

#include "data/example.h"

namespace gr::data {

// One batch file: images uint8 [N, 3, 32, 32] (data) and labels int64 [N] (target).
// Sizes that are not a multiple of 3073 bytes and labels above 9 throw gr::Error naming the file.
Example<> read_cifar10_batch(const std::string& path);

}  // namespace gr::data
