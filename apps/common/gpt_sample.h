// Text from a GPT: autoregressive sampling with temperature and top-k, bytes in and out.
#pragma once

#include <gradring/gradring.h>

#include <string>

#include "gpt.h"

namespace gr::apps {

// Continues `prompt` by `tokens` bytes. Each step feeds the last `block` tokens, divides the
// last position's logits by `temperature`, keeps the `top_k` largest (0: all) and draws from
// their softmax with `gen` (the default generator when null). temperature 0 is greedy.
inline std::string sample_text(GPT& model, const std::string& prompt, int64_t tokens, double temperature,
                               int64_t top_k, Generator* gen = nullptr) {
  GR_CHECK(temperature >= 0, "sample: temperature must be >= 0, got ", temperature);
  GR_CHECK(top_k >= 0, "sample: top-k must be >= 0, got ", top_k);
  NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const Device device = model->wte->weight.device();
  std::string text = prompt.empty() ? std::string("\n") : prompt;
  for (int64_t i = 0; i < tokens; ++i) {
    const size_t context = std::min<size_t>(text.size(), static_cast<size_t>(model->config.block));
    Tensor idx = empty({1, static_cast<int64_t>(context)}, kInt64);
    int64_t* p = idx.data_ptr<int64_t>();
    for (size_t k = 0; k < context; ++k) p[k] = static_cast<unsigned char>(text[text.size() - context + k]);
    Tensor logits = model(idx.to(device)).select(1, -1).squeeze(0).to(kCPU).to(kFloat64);  // [vocab]
    int64_t next = 0;
    if (temperature == 0) {
      next = logits.argmax().item<int64_t>();
    } else {
      logits = logits / temperature;
      if (top_k > 0 && top_k < logits.size(0)) {
        double kth = std::get<0>(logits.topk(top_k)).min().item<double>();
        logits = logits.masked_fill(logits < kth, -std::numeric_limits<double>::infinity());
      }
      next = softmax(logits, 0).multinomial(1, false, gen).item<int64_t>();
    }
    text.push_back(static_cast<char>(next));
  }
  model->train(was_training);
  return text.substr(prompt.empty() ? 1 : prompt.size());
}

}  // namespace gr::apps
