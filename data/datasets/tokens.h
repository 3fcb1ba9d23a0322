// TokenDataset: a language model's training windows from a file of tokens (bytes, or
// little-endian uint16 as nanoGPT's .bin files), random per epoch, disjoint across ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/arg.h"
#include "data/datasets/base.h"

namespace gr::data::datasets {

// Note [Token windows]
// A file of N tokens holds M = (N - 1) / L non-overlapping windows of L + 1 tokens (input
// and the target shifted by one share L of them). Epoch e of seed s shifts all windows by
// an offset in [0, N - 1 - M * L] and visits them in the order torch_randperm(M, s + e), both
// drawn from (s, e) alone; rank r of R takes the windows at positions r, r + R, r + 2R, ...
// of that order, M / R of them (every rank the same count, so they step together). So an
// epoch is a pure function of (file, L, seed, epoch): the ranks' windows are disjoint, none
// overlaps another of the same epoch, and a restart at epoch e sees what it saw before.

enum class TokenFormat { kUInt8, kUInt16 };

struct TokenDatasetOptions {
  /* implicit */ TokenDatasetOptions(int64_t window) : window_(window) {}
  GR_ARG(int64_t, window);  // L: tokens per input (and per target)
  GR_ARG(TokenFormat, format) = TokenFormat::kUInt16;
  GR_ARG(uint64_t, seed) = 0;
  GR_ARG(int64_t, num_replicas) = 1;
  GR_ARG(int64_t, rank) = 0;
};

class TokenDataset : public Dataset<TokenDataset> {
 public:
  // Reads the whole file; a missing file, an odd byte count for uint16, or fewer than
  // window + 1 tokens throw gr::Error naming the file.
  TokenDataset(const std::string& path, TokenDatasetOptions options);
  // The same over tokens already in memory (a split of a corpus, say); `name` stands for the
  // file in error messages.
  TokenDataset(std::vector<uint16_t> tokens, TokenDatasetOptions options, std::string name = "<tokens in memory>");
  // A file's tokens as they are read (the checks of the constructor above, bar the window).
  static std::vector<uint16_t> read_file(const std::string& path, TokenFormat format);

  // Window `index` of this rank in the current epoch: input int64 [L], target int64 [L]
  // (input shifted by one token).
  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;  // windows of this rank per epoch

  // Chooses the epoch get() reads (default 0); copies made earlier keep theirs. A loader
  // sets it on its copies before each epoch (Note [Datasets are values]).
  void set_epoch(int64_t epoch);
  int64_t epoch() const { return epoch_; }
  // Where window `index` of this rank starts in the file, in tokens.
  int64_t start(size_t index) const;
  int64_t num_tokens() const { return static_cast<int64_t>(tokens_->size()); }
  const TokenDatasetOptions& options() const { return options_; }

 private:
  std::string path_;
  TokenDatasetOptions options_;
  std::shared_ptr<const std::vector<uint16_t>> tokens_;  // shared by copies
  int64_t epoch_ = 0;
  std::shared_ptr<const std::vector<int64_t>> starts_;  // this rank's windows in this epoch
};

}  // namespace gr::data::datasets
