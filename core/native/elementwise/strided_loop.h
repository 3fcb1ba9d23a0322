// StridedLoop: the shared description of an element-wise pass over broadcast, strided
// operands (output first). Dims are coalesced so contiguous tensors become one flat run.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "core/tensor.h"

namespace gr::native {

constexpr int kMaxOperands = 4;  // the output and up to three inputs

struct StridedLoop {
  int noperands = 0;
  int64_t numel = 0;
  std::vector<int64_t> shape;                                  // innermost dim last
  std::array<std::vector<int64_t>, kMaxOperands> strides;      // in elements, 0 = broadcast
  std::array<char*, kMaxOperands> data{};                      // first element of each operand

  int ndim() const { return static_cast<int>(shape.size()); }
};

// Describes a pass over `operands` (output first) in the broadcast `shape`. Every operand
// must broadcast to `shape`; the caller has checked dtypes and devices.
StridedLoop make_strided_loop(std::initializer_list<Tensor> operands, IntArrayRef shape);

// The broadcast shape of two shapes (NumPy rules); `op` names the caller in the error.
std::vector<int64_t> broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op);

}  // namespace gr::native
