// Autocast's one policy table: for every op that takes part, what it does on the CPU and on
// CUDA (Note [Autocast policy table]). Included by autocast.h.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/device.h"

namespace gr::autocast {

// none: the op is not intercepted (its inputs' dtypes, as for an unlisted op);
// lower_precision_fp: floating inputs go to the autocast dtype; fp32: reduced-float inputs go
// to float32; banned: refused under autocast (PyTorch's message).
enum class CastPolicy : uint8_t { none, lower_precision_fp, fp32, banned };

// Note [Autocast policy table]
// PyTorch's lists (aten/src/ATen/autocast_mode.cpp) for the ops gradring has, one row per op,
// the CPU's column and CUDA's side by side so they cannot drift apart. The two devices agree
// on products and attention (lower precision) and on the losses (float32); CUDA also runs
// the norms and softmax in float32 (PyTorch's fp32 and fp32_set_opt_dtype lists, the latter
// being fp32 for ops called without a dtype, the only way gradring's softmax is called),
// where the CPU leaves them in their inputs' dtype; CUDA bans binary_cross_entropy (unsafe
// to autocast: use binary_cross_entropy_with_logits). A row's op name is the function that
// GR_AUTOCAST(op, ...) calls back with the cast arguments.
#define GR_AUTOCAST_POLICIES(_)                                          \
  /* op                              CPU                 CUDA */        \
  _(mm,                              lower_precision_fp, lower_precision_fp) \
  _(bmm,                             lower_precision_fp, lower_precision_fp) \
  _(matmul,                          lower_precision_fp, lower_precision_fp) \
  _(linear,                          lower_precision_fp, lower_precision_fp) \
  _(addmm,                           lower_precision_fp, lower_precision_fp) \
  _(baddbmm,                         lower_precision_fp, lower_precision_fp) \
  _(addbmm,                          lower_precision_fp, lower_precision_fp) \
  _(conv1d,                          lower_precision_fp, lower_precision_fp) \
  _(conv2d,                          lower_precision_fp, lower_precision_fp) \
  _(conv_transpose1d,                lower_precision_fp, lower_precision_fp) \
  _(conv_transpose2d,                lower_precision_fp, lower_precision_fp) \
  _(prelu,                           lower_precision_fp, lower_precision_fp) \
  _(scaled_dot_product_attention,    lower_precision_fp, lower_precision_fp) \
  _(layer_norm,                      none,               fp32)               \
  _(group_norm,                      none,               fp32)               \
  _(softmax,                         none,               fp32)               \
  _(log_softmax,                     none,               fp32)               \
  _(prod,                            fp32,               fp32)               \
  _(nll_loss,                        fp32,               fp32)               \
  _(cross_entropy,                   fp32,               fp32)               \
  _(mse_loss,                        fp32,               fp32)               \
  _(l1_loss,                         fp32,               fp32)               \
  _(smooth_l1_loss,                  fp32,               fp32)               \
  _(huber_loss,                      fp32,               fp32)               \
  _(kl_div,                          fp32,               fp32)               \
  _(binary_cross_entropy,            fp32,               banned)             \
  _(binary_cross_entropy_with_logits, fp32,              fp32)               \
  _(cosine_embedding_loss,           fp32,               fp32)               \
  _(margin_ranking_loss,             fp32,               fp32)               \
  _(triplet_margin_loss,             fp32,               fp32)

enum class Op : uint8_t {
#define GR_AUTOCAST_ENUM(op, cpu, cuda) op,
  GR_AUTOCAST_POLICIES(GR_AUTOCAST_ENUM)
#undef GR_AUTOCAST_ENUM
  kCount
};

struct OpPolicy {
  std::string_view name;
  CastPolicy cpu, cuda;
};

inline constexpr OpPolicy kOpPolicies[] = {
#define GR_AUTOCAST_ROW(op, cpu, cuda) {#op, CastPolicy::cpu, CastPolicy::cuda},
    GR_AUTOCAST_POLICIES(GR_AUTOCAST_ROW)
#undef GR_AUTOCAST_ROW
};
static_assert(sizeof(kOpPolicies) / sizeof(kOpPolicies[0]) == static_cast<size_t>(Op::kCount));

// The policy of `op` for tensors on `device_type` (none for device types without autocast).
constexpr CastPolicy policy(Op op, DeviceType device_type) {
  const OpPolicy& row = kOpPolicies[static_cast<size_t>(op)];
  return device_type == kCPU ? row.cpu : device_type == kCUDA ? row.cuda : CastPolicy::none;
}

}  // namespace gr::autocast
