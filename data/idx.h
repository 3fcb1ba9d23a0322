// IDX reader: the file format of MNIST and Fashion-MNIST (a big-endian header, then the
// array), plain or gzip-compressed.
#pragma once

#include <string>

#include "core/tensor.h"

namespace gr::data {

// Reads an IDX file: magic bytes 0x00 0x00 <dtype code> <ndims>, ndims big-endian uint32
// sizes, then the values in row-major order, big-endian. A gzip-compressed file (found by
// its gzip magic; a name ending in .gz must be one) is decompressed while reading.
// dtype codes: 0x08 uint8 (stays uint8), 0x09 int8, 0x0B int16 and 0x0C int32 (widened to
// int64: gradring has no narrower signed integers), 0x0D float32, 0x0E float64.
// Any malformed file throws gr::Error naming the file and what is wrong with it.
Tensor read_idx(const std::string& path);

}  // namespace gr::data
