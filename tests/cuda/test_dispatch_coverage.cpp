// Every dispatch stub of core/native has a CUDA kernel registered in this build. Runs without
// a device (it only reads the stubs' tables), in the suite that runs everywhere.
#include <doctest/doctest.h>

#include <string>

#include "core/native/batch_norm.h"
#include "core/native/conv2d.h"
#include "core/native/copy.h"
#include "core/native/dropout.h"
#include "core/native/elementwise.h"
#include "core/native/gemm.h"
#include "core/native/loss.h"
#include "core/native/optimizer_steps.h"
#include "core/native/pooling.h"
#include "core/native/random.h"
#include "core/native/reduce.h"
#include "core/native/softmax.h"

using namespace gr;
using namespace gr::native;

namespace {
template <class Stub>
void check_both(const Stub& stub) {
  INFO(std::string(stub.name()));
  CHECK(stub.has(kCPU));
  CHECK(stub.has(kCUDA));
}
}  // namespace

TEST_SUITE("cuda_no_device") {
  TEST_CASE("every dispatch stub has a CPU and a CUDA kernel") {
#define GR_CHECK_ELEMENTWISE_STUB(name) check_both(name##_stub);
    GR_ELEMENTWISE_STUBS(GR_CHECK_ELEMENTWISE_STUB)
#undef GR_CHECK_ELEMENTWISE_STUB
    check_both(convert_stub);
    check_both(fill_stub);
    CHECK(cross_device_copy_stub.has(kCUDA));  // copies between the CPU and a GPU: the CUDA side only
    check_both(sum_stub);
    check_both(max_stub);
    check_both(gemm_stub);
    check_both(gemm_batched_stub);
    check_both(gemm_bias_stub);
    check_both(conv2d_forward_stub);
    check_both(conv2d_backward_stub);
    check_both(max_pool2d_stub);
    check_both(max_pool2d_backward_stub);
    check_both(avg_pool2d_stub);
    check_both(avg_pool2d_backward_stub);
    check_both(adaptive_avg_pool2d_stub);
    check_both(adaptive_avg_pool2d_backward_stub);
    check_both(batch_norm_stats_stub);
    check_both(batch_norm_elemt_stub);
    check_both(batch_norm_backward_reduce_stub);
    check_both(batch_norm_backward_elemt_stub);
    check_both(batch_norm_update_stats_stub);
    check_both(softmax_stub);
    check_both(softmax_backward_stub);
    check_both(nll_loss_stub);
    check_both(nll_loss_backward_stub);
    check_both(dropout_stub);
    check_both(dropout_backward_stub);
    check_both(random_stub);
    check_both(sgd_step_stub);
    check_both(adam_step_stub);
    check_both(adadelta_step_stub);
  }
}
