// The GPU peak table of the apps' MFU (apps/common/gpu_peak.h, Note [GPU peak]): each GPU's
// dense datasheet figure by name and compute capability, per dtype, with its source named.
#include "common/gpu_peak.h"
#include "test_util.h"

using namespace gr;
using apps::gpu_datasheet_peak;

namespace {
double gflops(std::string_view name, int major, int minor, ScalarType t) {
  auto p = gpu_datasheet_peak(name, major, minor, t);
  REQUIRE(p.has_value());
  return p->gflops;
}
}  // namespace

TEST_CASE("gpu_datasheet_peak: the H200 of the first GPU run and its relatives") {
  // cudaDeviceProp::name on the H200 of 2026-11-28: "NVIDIA H200", compute capability 9.0.
  CHECK(gflops("NVIDIA H200", 9, 0, kFloat32) == 67e3);
  CHECK(gflops("NVIDIA H200", 9, 0, kBFloat16) == 989e3);
  CHECK(gflops("NVIDIA H200", 9, 0, kFloat16) == 989e3);
  CHECK(gflops("NVIDIA H200", 9, 0, kFloat64) == 67e3);
  CHECK(gflops("NVIDIA H100 80GB HBM3", 9, 0, kFloat32) == 67e3);  // SXM
  CHECK(gflops("NVIDIA H100 80GB HBM3", 9, 0, kBFloat16) == 989e3);
  CHECK(gflops("NVIDIA H100 PCIe", 9, 0, kFloat32) == 51e3);
  CHECK(gflops("NVIDIA H100 PCIe", 9, 0, kBFloat16) == 756e3);
  CHECK(gflops("NVIDIA H100 NVL", 9, 0, kBFloat16) == 835e3);
  CHECK(gflops("NVIDIA H200 NVL", 9, 0, kFloat32) == 60e3);
  CHECK(gflops("NVIDIA GH200 480GB", 9, 0, kBFloat16) == 989e3);
  CHECK(gflops("NVIDIA A100-SXM4-80GB", 8, 0, kFloat32) == 19.5e3);
  CHECK(gflops("NVIDIA A100 80GB PCIe", 8, 0, kBFloat16) == 312e3);
}

TEST_CASE("gpu_datasheet_peak: names its source and what the figure counts") {
  auto f32 = gpu_datasheet_peak("NVIDIA H200", 9, 0, kFloat32);
  REQUIRE(f32.has_value());
  CHECK(f32->source.find("NVIDIA H200 datasheet") != std::string::npos);
  CHECK(f32->source.find("67 TFLOP/s") != std::string::npos);
  CHECK(f32->source.find("without TF32") != std::string::npos);
  auto bf16 = gpu_datasheet_peak("NVIDIA H200", 9, 0, kBFloat16);
  REQUIRE(bf16.has_value());
  CHECK(bf16->source.find("989 TFLOP/s") != std::string::npos);
  CHECK(bf16->source.find("dense") != std::string::npos);
}

TEST_CASE("gpu_datasheet_peak: nothing for GPUs or dtypes outside the table (the apps then measure a GEMM)") {
  CHECK_FALSE(gpu_datasheet_peak("NVIDIA GeForce RTX 4090", 8, 9, kFloat32).has_value());
  CHECK_FALSE(gpu_datasheet_peak("Tesla V100-SXM2-16GB", 7, 0, kFloat32).has_value());
  CHECK_FALSE(gpu_datasheet_peak("NVIDIA H200", 8, 0, kFloat32).has_value());  // name and capability disagree
  CHECK_FALSE(gpu_datasheet_peak("NVIDIA H200", 9, 0, kInt64).has_value());
  CHECK(gflops("nvidia h200", 9, 0, kFloat32) == 67e3);  // case-insensitive
}
