// The NCCL backend's device-free parts, run with every device hidden: argument checks with
// clear messages, dtype and reduce-op mapping, the text of NCCL errors, and the failure of
// the nccl backend on a machine without a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "distributed/backends/init.h"
#include "distributed/backends/nccl/nccl_utils.h"
#include "distributed/backends/nccl/process_group_nccl.h"
#include "nccl_test_util.h"
#include "test_util.h"

using namespace gr;
using namespace gr::distributed;

namespace {
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const gr::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_SUITE("nccl_no_device") {
  TEST_CASE("the nccl backend is registered in this build") {
    std::vector<std::string> names = registered_backends();
    CHECK(std::find(names.begin(), names.end(), "nccl") != names.end());
  }

  TEST_CASE("tensor checks name the collective, the rank and the problem") {
    Tensor cpu = zeros({4});
    std::string m = error_of([&] { check_tensor(cpu, {"nccl", "allreduce", 3, 4, {kCUDA, -1}}); });
    CHECK(m.find("nccl allreduce on rank 3: tensors must be CUDA tensors, got a cpu tensor") != std::string::npos);
    m = error_of([&] { check_tensor(Tensor(), {"nccl", "broadcast", 1, 2, {kCUDA, 0}}); });
    CHECK(m.find("nccl broadcast on rank 1: tensor is undefined") != std::string::npos);
    m = error_of([&] { check_tensors({}, {"nccl", "allgather", 0, 1, {kCUDA, 0}}); });
    CHECK(m.find("nccl allgather on rank 0: the tensor list is empty") != std::string::npos);
    m = error_of([&] { check_tensors({cpu, cpu}, {"nccl", "allreduce_coalesced", 2, 4, {kCUDA, 0}}); });
    CHECK(m.find("tensors must be CUDA tensors") != std::string::npos);
  }

  TEST_CASE("dtypes and reduce ops map to NCCL's, avg needs a floating point dtype") {
    CHECK(nccl::to_nccl(kFloat32) == ncclFloat32);
    CHECK(nccl::to_nccl(kFloat64) == ncclFloat64);
    CHECK(nccl::to_nccl(kInt64) == ncclInt64);
    CHECK(nccl::to_nccl(kUInt8) == ncclUint8);
    CHECK(nccl::to_nccl(kBFloat16) == ncclBfloat16);
    CHECK(nccl::to_nccl(kFloat16) == ncclFloat16);
    CHECK(error_of([] { nccl::to_nccl(kBool); }).find("nccl: dtype bool is not supported") != std::string::npos);
    CHECK(nccl::to_nccl(ReduceOp::Sum, kFloat32, "allreduce", 0) == ncclSum);
    CHECK(nccl::to_nccl(ReduceOp::Product, kInt64, "allreduce", 0) == ncclProd);
    CHECK(nccl::to_nccl(ReduceOp::Min, kUInt8, "allreduce", 0) == ncclMin);
    CHECK(nccl::to_nccl(ReduceOp::Max, kBFloat16, "allreduce", 0) == ncclMax);
    CHECK(nccl::to_nccl(ReduceOp::Avg, kFloat16, "allreduce", 0) == ncclAvg);
    const std::string avg = error_of([] { nccl::to_nccl(ReduceOp::Avg, kInt64, "reduce_scatter", 1); });
    CHECK(avg.find("nccl reduce_scatter on rank 1: avg needs a floating point tensor, got int64") != std::string::npos);
  }

  TEST_CASE("an NCCL error carries NCCL's strings, the statement, file:line, device and rank") {
    const std::string text = nccl::error_text(ncclInvalidArgument, "Invalid root 7", "ncclBroadcast(p, p, n)",
                                              "broadcast", 1, 3);
    CHECK(text.find(ncclGetErrorString(ncclInvalidArgument)) != std::string::npos);
    CHECK(text.find("in `ncclBroadcast(p, p, n)` (broadcast, device cuda:1, rank 3): Invalid root 7") !=
          std::string::npos);
    const std::string thrown = error_of(
        [] { nccl::throw_error(ncclSystemError, nullptr, "ncclSend(x)", "send", "f.cpp", 42, 0, 1); });
    CHECK(thrown.find("NCCL error 2: ") != std::string::npos);
    CHECK(thrown.find("(f.cpp:42)") != std::string::npos);
    CHECK(thrown.find("rank 1)") != std::string::npos);
  }

  TEST_CASE("without a device the nccl group fails at once, saying why") {
    auto store = std::make_shared<FileStore>(test::temp_path("nccl_no_device", "store1"), 1);
    std::string m = error_of([&] { ProcessGroupNCCL pg(store, 0, 1); });
    CHECK(m.find("nccl: rank 0 of 1 sees no CUDA device (CUDA_VISIBLE_DEVICES=)") != std::string::npos);
    CHECK(m.find("Use the gloo backend for CPU tensors") != std::string::npos);
  }

  TEST_CASE("init_process_group(\"nccl\") without a device fails with a clear message") {
    InitOptions o;
    o.backend = "nccl";
    o.init_method = "file://" + test::temp_path("nccl_no_device", "store2");
    o.rank = 0;
    o.world_size = 1;
    o.timeout = std::chrono::seconds(20);
    const std::string m = error_of([&] { init_process_group(o); });
    CHECK(m.find("sees no CUDA device") != std::string::npos);
    CHECK_FALSE(is_initialized());
  }
}
