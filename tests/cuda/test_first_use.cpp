// The first CUDA tensor of a process must work without any earlier call into gradring
// (main.cpp's --first-use mode asks the CUDA runtime, not gradring, whether a device exists):
// creating it is what registers the backend.
#include "parity.h"

using namespace gr;

TEST_SUITE("cuda_first_use") {
  TEST_CASE("Tensor::to(cuda) as the first thing a program does") {
    Tensor x = tensor({1.0, 2.0, 3.0}).to(Device("cuda"));
    CHECK(x.is_cuda());
    CHECK(x.cpu().equal(tensor({1.0, 2.0, 3.0})));
    CHECK(cuda_is_available());
  }
}
