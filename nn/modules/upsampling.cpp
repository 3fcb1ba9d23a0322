// Upsample: forward through F::interpolate, pretty_print as libtorch's.
#include "nn/modules/upsampling.h"

namespace gr::nn {

namespace {
functional::InterpolateFuncOptions::mode_t interpolate_mode(const UpsampleOptions::mode_t& mode) {
  return std::visit([](auto tag) { return functional::InterpolateFuncOptions::mode_t(tag); }, mode);
}

template <class T>
void print_list(std::ostream& out, const std::vector<T>& v) {
  out << "[";
  for (size_t i = 0; i < v.size(); ++i) out << (i ? ", " : "") << v[i];
  out << "]";
}
}  // namespace

Tensor UpsampleImpl::forward(const Tensor& input) {
  return functional::detail::interpolate(input, options.size(), options.scale_factor(),
                                         interpolate_mode(options.mode()), options.align_corners(), std::nullopt,
                                         false);
}

void UpsampleImpl::pretty_print(std::ostream& out) const {
  out << "gr::nn::Upsample(";
  if (options.scale_factor()) {
    out << "scale_factor=";
    print_list(out, *options.scale_factor());
  } else if (options.size()) {
    out << "size=";
    print_list(out, *options.size());
  }
  out << ", mode=" << functional::interpolate_mode_name(interpolate_mode(options.mode())) << ")";
}

}  // namespace gr::nn
