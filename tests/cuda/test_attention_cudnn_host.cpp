// Host tests of Note [cuDNN attention] (suite "cuda_host", no device needed): which calls
// cudnn_attention::choose() sends to cuDNN and why it keeps the others, and how gradring's
// operand layouts (AttentionLayout over B = N * H batch entries) become cuDNN's [N, H, rows,
// cols] strides, checked element by element against AttentionLayout::at.
#include <gradring/core/cuda.h>

#include <cstdlib>

#include "cuda_kernels/attention_cudnn.h"
#include "parity.h"

using namespace gr;
namespace A = gr::cuda::cudnn_attention;
using A::Verdict;

namespace {

// A bfloat16 causal GPT call that cuDNN takes; each test changes one thing.
A::Call gpt_call() {
  A::Call c;
  c.dtype = kBFloat16;
  c.B = 16 * 12, c.L = 512, c.S = 512, c.E = 64, c.Ev = 64;
  c.causal = true;
  c.built = true;
  return c;
}

// Every (n, h, i, c) of cuDNN's view lands where gradring's layout puts it.
void expect_same_elements(const native::AttentionLayout& at, int64_t N, int64_t H, int64_t rows, int64_t cols) {
  const auto s = A::cudnn_strides(at, N, H, rows, cols);
  REQUIRE(s.has_value());
  CHECK((*s)[3] == 1);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t c = 0; c < cols; c += cols - 1) {  // first and last column
          const int64_t ours = at.at(n * H + h, i) + c;
          const int64_t theirs = n * (*s)[0] + h * (*s)[1] + i * (*s)[2] + c * (*s)[3];
          if (ours != theirs) {
            FAIL_CHECK("n " << n << " h " << h << " i " << i << " c " << c << ": " << ours << " != " << theirs);
            return;
          }
        }
}

}  // namespace

TEST_SUITE("cuda_host") {
  TEST_CASE("cuDNN attention: bfloat16/float16 without dropout or mask go to cuDNN, the rest stays") {
    CHECK(A::choose(gpt_call()) == Verdict::kCudnn);
    A::Call c = gpt_call();
    c.dtype = kFloat16;
    CHECK(A::choose(c) == Verdict::kCudnn);
    c.causal = false, c.L = 77, c.S = 130;  // odd lengths, L != S (top-left causal agrees too)
    CHECK(A::choose(c) == Verdict::kCudnn);
    c.causal = true;
    CHECK(A::choose(c) == Verdict::kCudnn);
    for (ScalarType t : {kFloat32, kFloat64}) {  // float32 and float64 stay on gradring's kernels
      c = gpt_call();
      c.dtype = t;
      CHECK(A::choose(c) == Verdict::kDtype);
    }
    c = gpt_call();
    c.dropout_p = 0.1;  // cuDNN's dropout is not gradring's Philox stream
    CHECK(A::choose(c) == Verdict::kDropout);
    c = gpt_call();
    c.mask = true;
    CHECK(A::choose(c) == Verdict::kMask);
    c = gpt_call();
    c.deterministic = true;  // cuDNN's backward has a deterministic algorithm; ours alerts
    CHECK(A::choose(c) == Verdict::kCudnn);
    c = gpt_call();
    c.enabled = false;
    CHECK(A::choose(c) == Verdict::kDisabled);
    c = gpt_call();
    c.built = false;
    CHECK(A::choose(c) == Verdict::kNotBuilt);
    for (int64_t L : {0, 1}) {
      c = gpt_call();
      c.L = L;
      CHECK(A::choose(c) == (L == 0 ? Verdict::kEmpty : Verdict::kCudnn));
    }
    CHECK(std::string(A::describe(Verdict::kDropout)).find("dropout") != std::string::npos);
  }

  TEST_CASE("cuDNN attention: head dims multiples of 8 up to 256") {
    for (int64_t d : {8, 32, 64, 80, 96, 128, 256}) {
      A::Call c = gpt_call();
      c.E = c.Ev = d;
      CHECK(A::choose(c) == Verdict::kCudnn);
    }
    for (int64_t d : {4, 33, 60, 264, 0}) {
      A::Call c = gpt_call();
      c.E = d;
      CHECK(A::choose(c) == Verdict::kHeadDim);
      c = gpt_call();
      c.Ev = d;
      CHECK(A::choose(c) == Verdict::kHeadDim);
    }
  }

  TEST_CASE("cuDNN attention: the switch's default and gr::cuda::enable_cudnn_sdp") {
    const char* env = std::getenv("GRADRING_CUDNN_ATTENTION");
    const bool expected = env == nullptr || *env == '\0' || std::string(env) != "0";
    CHECK(cuda::cudnn_sdp_enabled() == expected);
    {
      const cuda_test::CudnnSdpScope off(false);
      CHECK_FALSE(cuda::cudnn_sdp_enabled());
    }
    CHECK(cuda::cudnn_sdp_enabled() == expected);
  }

  TEST_CASE("cuDNN attention: contiguous, GPT-view and per-entry layouts map to [N, H, rows, cols] strides") {
    const int64_t N = 3, H = 4, T = 7, D = 16;
    // Contiguous [N, H, T, D] flattened to B = N * H entries (inner 1).
    expect_same_elements(native::AttentionLayout::contiguous(T, D), N, H, T, D);
    // The GPT's q = qkv.view({N, T, H, D}).transpose(1, 2): inner H, rows 3C apart.
    const int64_t C = H * D;
    expect_same_elements({H, T * 3 * C, D, 3 * C}, N, H, T, D);
    // Grouped by heads with a gap between samples.
    expect_same_elements({H, H * T * D + 64, T * D, D}, N, H, T, D);
    // One head, one row, one sample: the unused strides are a packed tensor's.
    const auto one = A::cudnn_strides(native::AttentionLayout::contiguous(1, D), 1, 1, 1, D);
    REQUIRE(one.has_value());
    CHECK(*one == std::array<int64_t, 4>{D, D, D, 1});
  }

  TEST_CASE("cuDNN attention: broadcast or unmappable layouts and misaligned rows are refused") {
    const int64_t N = 2, H = 4, T = 5, D = 64;
    // k shared by the batch: stride 0 over N.
    CHECK_FALSE(A::cudnn_strides({H, 0, T * D, D}, N, H, T, D).has_value());
    // Shared by the heads: stride 0 over H.
    CHECK_FALSE(A::cudnn_strides({H, T * D, 0, D}, N, H, T, D).has_value());
    // Entries grouped by 2 while the query has 4 heads: not one stride per dim.
    CHECK_FALSE(A::cudnn_strides({2, 2 * T * D, T * D, D}, N, H, T, D).has_value());
    // 16-byte rows: bfloat16 rows of 64 are 128 bytes; rows of 36 elements (72 bytes) are not.
    alignas(16) static unsigned char buf[64];
    const std::array<int64_t, 4> good{H * T * D, T * D, D, 1}, odd_rows{H * T * 36, T * 36, 36, 1};
    CHECK(A::aligned(buf, good, 2));
    CHECK_FALSE(A::aligned(buf, odd_rows, 2));
    CHECK_FALSE(A::aligned(buf + 2, good, 2));
  }
}
