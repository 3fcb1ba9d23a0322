// Convolution layers: Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d.
#include "nn/modules/conv.h"

#include <cmath>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/init.h"

namespace gr::nn {

namespace {

template <size_t D, bool Transposed>
std::string layer_name() {
  return std::string(Transposed ? "ConvTranspose" : "Conv") + std::to_string(D) + "d";
}

// The output_padding that makes a transposed convolution of `input` produce output_size
// (libtorch's ConvTransposeNdImpl::_output_padding); without one, the options' own.
template <size_t D>
std::vector<int64_t> output_padding_for(const ConvTransposeOptions<D>& o, const Tensor& input,
                                        const std::optional<IntArrayRef>& output_size) {
  const IntArrayRef fixed = o.output_padding();
  if (!output_size) return fixed.vec();
  std::vector<int64_t> want = output_size->vec();
  if (want.size() == D + 2) want.erase(want.begin(), want.begin() + 2);
  const std::string name = layer_name<D, true>();
  GR_CHECK(want.size() == D, name, ": output_size must have ", D, " or ", D + 2, " elements, got ", *output_size);
  GR_CHECK(input.dim() == static_cast<int64_t>(D) + 2, name, ": expected a ", D + 2, "-D input, got ", input.sizes());
  std::vector<int64_t> lo(D), hi(D), padding(D);
  for (size_t d = 0; d < D; ++d) {
    lo[d] = (input.size(static_cast<int64_t>(d) + 2) - 1) * o.stride()[d] - 2 * o.padding()[d] +
            o.dilation()[d] * (o.kernel_size()[d] - 1) + 1;
    hi[d] = lo[d] + o.stride()[d] - 1;
    padding[d] = want[d] - lo[d];
  }
  for (size_t d = 0; d < D; ++d)
    GR_CHECK(want[d] >= lo[d] && want[d] <= hi[d], name, ": requested an output size of ", IntArrayRef(want),
             ", but valid sizes range from ", IntArrayRef(lo), " to ", IntArrayRef(hi), " (for an input of ",
             input.sizes(), ")");
  return padding;
}

}  // namespace

template <size_t D, class Options>
ConvNdImpl<D, Options>::ConvNdImpl(const Options& o) : Module("gr::nn::" + layer_name<D, transposed>()), options(o) {
  const std::string name = layer_name<D, transposed>();
  GR_CHECK(o.in_channels() > 0 && o.out_channels() > 0, name, ": channel counts must be positive, got ",
           o.in_channels(), " and ", o.out_channels());
  GR_CHECK(o.groups() > 0 && o.in_channels() % o.groups() == 0 && o.out_channels() % o.groups() == 0, name,
           ": in_channels (", o.in_channels(), ") and out_channels (", o.out_channels(),
           ") must be divisible by groups (", o.groups(), ")");
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{o.in_channels(), o.out_channels() / o.groups()}
                                          : std::vector<int64_t>{o.out_channels(), o.in_channels() / o.groups()};
  for (size_t d = 0; d < D; ++d) shape.push_back(o.kernel_size()[d]);
  weight = register_parameter("weight", gr::empty(shape));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}

template <size_t D, class Options>
void ConvNdImpl<D, Options>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    init::uniform_(bias, -bound, bound);
  }
}

template <size_t D, class Options>
void ConvNdImpl<D, Options>::pretty_print(std::ostream& out) const {
  out << "gr::nn::" << layer_name<D, transposed>() << "(" << options.in_channels() << ", " << options.out_channels()
      << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride();
  if (!(options.padding() == ExpandingArray<D>(0))) out << ", padding=" << options.padding();
  if (!(options.dilation() == ExpandingArray<D>(1))) out << ", dilation=" << options.dilation();
  if constexpr (transposed)
    if (!(options.output_padding() == ExpandingArray<D>(0))) out << ", output_padding=" << options.output_padding();
  if (options.groups() != 1) out << ", groups=" << options.groups();
  if (!options.bias()) out << ", bias=false";
  out << ")";
}

template class ConvNdImpl<1, Conv1dOptions>;
template class ConvNdImpl<2, Conv2dOptions>;
template class ConvNdImpl<1, ConvTranspose1dOptions>;
template class ConvNdImpl<2, ConvTranspose2dOptions>;

Tensor Conv1dImpl::forward(const Tensor& input) {
  return gr::conv1d(input, weight, bias, options.stride(), options.padding(), options.dilation(), options.groups());
}

Tensor Conv2dImpl::forward(const Tensor& input) {
  return gr::conv2d(input, weight, bias, options.stride(), options.padding(), options.dilation(), options.groups());
}

Tensor ConvTranspose1dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  return gr::conv_transpose1d(input, weight, bias, options.stride(), options.padding(),
                              output_padding_for(options, input, output_size), options.groups(), options.dilation());
}

Tensor ConvTranspose2dImpl::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  return gr::conv_transpose2d(input, weight, bias, options.stride(), options.padding(),
                              output_padding_for(options, input, output_size), options.groups(), options.dilation());
}

}  // namespace gr::nn
