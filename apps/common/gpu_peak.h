// The peak FLOP/s of a GPU for the apps' MFU: NVIDIA's datasheet figure for the GPUs in the
// table (Note [GPU peak]), else a measured GEMM rate; the answer says which.
#pragma once

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <gradring/gradring.h>

namespace gr::apps {

// Note [GPU peak]
// MFU on a GPU divides by that GPU's dense peak (no 2:4 sparsity) for the dtype of the
// products as gradring runs them: float32 on the FP32 pipes (cuBLAS and cuDNN without TF32, as
// PyTorch's default), bfloat16 and float16 on the tensor cores, float64 on the FP64 tensor
// cores (DGEMM uses them). The figures are NVIDIA's datasheets' (their tensor-core rows are
// "with sparsity": the dense rate is half). A GPU is recognised by its name and compute
// capability; any other gets the rate of a measured 4096^3 gr::mm in the dtype (best of
// five), which is gradring's own GEMM, not the hardware's peak: the output says which.
struct DevicePeak {
  double gflops = 0;
  std::string source;  // where the figure comes from, for the output
};

namespace detail {
struct DatasheetRow {
  const char* name;  // a part of cudaDeviceProp::name, matched case-insensitively
  int major, minor;  // compute capability
  double fp32, bf16, fp64;  // dense TFLOP/s (float16 as bfloat16)
  const char* source;
};
// First match wins: the NVL and PCIe parts before the SXM part of the same name.
inline constexpr DatasheetRow kDatasheet[] = {
    {"GH200", 9, 0, 67, 989, 67, "NVIDIA GH200 Grace Hopper Superchip datasheet"},
    {"H200 NVL", 9, 0, 60, 835, 60, "NVIDIA H200 datasheet (H200 NVL)"},
    {"H200", 9, 0, 67, 989, 67, "NVIDIA H200 datasheet (H200 SXM)"},
    {"H100 NVL", 9, 0, 60, 835, 60, "NVIDIA H100 datasheet (H100 NVL)"},
    {"H100 PCIe", 9, 0, 51, 756, 51, "NVIDIA H100 datasheet (H100 PCIe)"},
    {"H100", 9, 0, 67, 989, 67, "NVIDIA H100 datasheet (H100 SXM)"},
    {"A100", 8, 0, 19.5, 312, 19.5, "NVIDIA A100 datasheet"},
};

inline std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}
}  // namespace detail

// The datasheet's dense peak of a GPU (by name and compute capability) for products in
// `dtype`, or nothing for a GPU, or a dtype, the table does not hold.
inline std::optional<DevicePeak> gpu_datasheet_peak(std::string_view name, int major, int minor, ScalarType dtype) {
  const std::string n = detail::lower(name);
  for (const detail::DatasheetRow& r : detail::kDatasheet) {
    if (n.find(detail::lower(r.name)) == std::string::npos) continue;
    if (r.major != major || r.minor != minor) return std::nullopt;
    const double tflops = dtype == kFloat32 ? r.fp32 : dtype == kBFloat16 || dtype == kFloat16 ? r.bf16 : dtype == kFloat64 ? r.fp64 : 0;
    if (tflops == 0) return std::nullopt;
    const char* what = dtype == kFloat32 ? "float32 without TF32" : dtype == kFloat64 ? "float64 tensor cores"
                                                                                      : "tensor cores, dense";
    char figure[32];
    std::snprintf(figure, sizeof figure, "%g TFLOP/s ", tflops);
    return DevicePeak{tflops * 1e3, std::string(r.source) + ": " + figure + what};
  }
  return std::nullopt;
}

// The rate of a 4096^3 gr::mm in `dtype` on `device` (best of five after a warm-up), in GFLOP/s.
inline double measured_gemm_gflops(const Device& device, ScalarType dtype) {
  const int64_t n = 4096;
  NoGradGuard no_grad;
  Generator g(1);  // its own: the default generator's stream stays the training run's
  Tensor a = randn({n, n}, TensorOptions(kFloat32).device(device), &g).to(dtype);
  Tensor b = randn({n, n}, TensorOptions(kFloat32).device(device), &g).to(dtype);
  mm(a, b);
  cuda::synchronize(device.index());
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    mm(a, b);
    cuda::synchronize(device.index());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * n * n * n / best / 1e9;
}

// The peak of CUDA device `device` for products in `dtype`: the datasheet's, else measured.
inline DevicePeak gpu_peak(const Device& device, ScalarType dtype) {
  const cuda::DeviceProperties p = cuda::get_device_properties(device.index());
  if (auto peak = gpu_datasheet_peak(p.name, p.major, p.minor, dtype)) return *peak;
  return {measured_gemm_gflops(device, dtype), "measured: a 4096^3 gr::mm in " + std::string(dtype_name(dtype)) + " on " +
                                                   p.name + " (no datasheet figure in apps/common/gpu_peak.h)"};
}

}  // namespace gr::apps
