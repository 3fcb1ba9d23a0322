// TokenDataset: reading a token file and choosing each epoch's windows. See Note [Token windows].
#include "data/datasets/tokens.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include "core/error.h"
#include "core/factory.h"
#include "data/samplers/randperm.h"

namespace gr::data::datasets {

std::vector<uint16_t> TokenDataset::read_file(const std::string& path, TokenFormat format) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  GR_CHECK(in, "TokenDataset: cannot open '", path, "': ", std::strerror(errno));
  const auto bytes = static_cast<size_t>(in.tellg());
  in.seekg(0);
  std::vector<char> raw(bytes);
  GR_CHECK(in.read(raw.data(), static_cast<std::streamsize>(bytes)), "TokenDataset: cannot read '", path, "'");
  if (format == TokenFormat::kUInt8) return {reinterpret_cast<const uint8_t*>(raw.data()),
                                             reinterpret_cast<const uint8_t*>(raw.data()) + bytes};
  GR_CHECK(bytes % 2 == 0, "TokenDataset: '", path, "' has ", bytes,
           " bytes, an odd count, but uint16 tokens take 2 bytes each (is it a file of bytes? use TokenFormat::kUInt8)");
  std::vector<uint16_t> tokens(bytes / 2);
  const auto* b = reinterpret_cast<const uint8_t*>(raw.data());
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint16_t>(b[2 * i] | (b[2 * i + 1] << 8));
  return tokens;
}

TokenDataset::TokenDataset(const std::string& path, TokenDatasetOptions options)
    : TokenDataset(read_file(path, options.format()), options, path) {}

TokenDataset::TokenDataset(std::vector<uint16_t> tokens, TokenDatasetOptions options, std::string name)
    : path_(std::move(name)), options_(options) {
  const int64_t L = options.window(), R = options.num_replicas();
  GR_CHECK(L >= 1, "TokenDataset: window must be >= 1, got ", L);
  GR_CHECK(R >= 1, "TokenDataset: num_replicas must be >= 1, got ", R);
  GR_CHECK(options.rank() >= 0 && options.rank() < R, "TokenDataset: rank ", options.rank(),
           " out of range for num_replicas ", R);
  tokens_ = std::make_shared<const std::vector<uint16_t>>(std::move(tokens));
  const int64_t n = num_tokens();
  GR_CHECK(n >= L + 1, "TokenDataset: '", path_, "' holds ", n, " tokens but a window of ", L, " needs at least ",
           L + 1, " (the input and the target shifted by one)");
  GR_CHECK((n - 1) / L >= R, "TokenDataset: '", path_, "' holds ", (n - 1) / L, " windows of ", L,
           " tokens, fewer than the ", R, " replicas");
  set_epoch(0);
}

void TokenDataset::set_epoch(int64_t epoch) {
  GR_CHECK(epoch >= 0, "TokenDataset::set_epoch: epoch must be >= 0, got ", epoch);
  const int64_t n = num_tokens(), L = options_.window(), R = options_.num_replicas();
  const int64_t m = (n - 1) / L, slack = n - 1 - m * L;
  const uint64_t seed = samplers::epoch_seed(options_.seed(), epoch);
  const int64_t offset = static_cast<int64_t>(std::mt19937_64(seed)() % static_cast<uint64_t>(slack + 1));
  const std::vector<int64_t> order = samplers::torch_randperm(m, seed);
  std::vector<int64_t> starts(static_cast<size_t>(m / R));
  for (size_t k = 0; k < starts.size(); ++k)
    starts[k] = offset + order[options_.rank() + static_cast<int64_t>(k) * R] * L;
  epoch_ = epoch;
  starts_ = std::make_shared<const std::vector<int64_t>>(std::move(starts));
}

std::optional<size_t> TokenDataset::size() const { return starts_->size(); }

int64_t TokenDataset::start(size_t index) const {
  GR_CHECK(index < starts_->size(), "TokenDataset: index ", index, " out of range [0, ", starts_->size(), ")");
  return (*starts_)[index];
}

Example<> TokenDataset::get(size_t index) {
  const int64_t begin = start(index), L = options_.window();
  Tensor window = empty({L + 1}, kInt64);
  int64_t* w = window.data_ptr<int64_t>();
  for (int64_t i = 0; i <= L; ++i) w[i] = (*tokens_)[static_cast<size_t>(begin + i)];
  return {window.slice(0, 0, L), window.slice(0, 1, L + 1)};
}

}  // namespace gr::data::datasets
