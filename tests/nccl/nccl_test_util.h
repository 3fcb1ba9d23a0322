// Helpers of the NCCL suite: the rank count chosen on the command line, per-rank devices,
// and a closed-form result check that reads CUDA results back to the host.
#pragma once

#include <gradring/gradring.h>

#include <string>

#include "compare.h"
#include "core/error.h"

namespace gr::test {

extern int g_nccl_ranks;  // set by main.cpp (--ranks N)

inline Device rank_device(int rank) { return Device(kCUDA, rank); }

// `got` (any device) must equal `want` (float64 CPU) within a relative 1e-6 (1e-2 for
// 16-bit floats); throws naming `what` and the rank.
inline void expect_values(const Tensor& got, const Tensor& want, const std::string& what, int rank) {
  const Tensor g = got.to(Device(kCPU)).to(kFloat64);
  const double tol = is_reduced_float(got.scalar_type()) ? 1e-2 : 1e-6;
  const double err = max_abs_diff(g, want);  // shapes must match; NaN fails
  GR_CHECK(err <= tol * (1 + want.abs().max().item<double>()), what, " on rank ", rank, ": wrong result (max error ",
           err, ")\ngot:\n", g, "\nwant:\n", want);
}

}  // namespace gr::test
