// Snapshot save/load/restore on top of the safetensors writer, with a CRC-32 checksum.
#include "nn/snapshot.h"

#include <array>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <limits>

#include "core/native/copy.h"
#include "nn/module.h"
#include "nn/optim/lr_scheduler.h"
#include "nn/optim/optimizer.h"
#include "nn/snapshot_checksum.h"

namespace gr {

namespace {

constexpr const char* kFormat = "gradring-snapshot";

// CRC-32 (IEEE, as zlib's crc32), table-driven.
class Crc32 {
 public:
  void update(const void* data, size_t n) {
    static const std::array<uint32_t, 256> table = [] {
      std::array<uint32_t, 256> t{};
      for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        t[i] = c;
      }
      return t;
    }();
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) crc_ = table[(crc_ ^ p[i]) & 0xff] ^ (crc_ >> 8);
  }
  void update(const std::string& s) { update(s.data(), s.size() + 1); }  // with the '\0' separator
  uint32_t value() const { return crc_ ^ 0xffffffffu; }

 private:
  uint32_t crc_ = 0xffffffffu;
};

// The checksum of everything a snapshot file holds except the checksum itself, over
// contiguous CPU tensors (in file order) and the metadata (sorted by key).
uint32_t checksum(const OrderedDict<Tensor>& tensors, const Metadata& metadata, uint64_t* payload_bytes) {
  Crc32 crc;
  uint64_t bytes = 0;
  for (const auto& [name, t] : tensors) {
    Tensor c = native::contiguous(native::to_device(t.detach(), Device(kCPU)));
    crc.update(name);
    crc.update(std::to_string(static_cast<int>(c.scalar_type())));
    for (int64_t d : c.sizes()) crc.update(std::to_string(d));
    crc.update(c.data_ptr(), c.nbytes());
    bytes += c.nbytes();
  }
  for (const auto& [k, v] : metadata) {
    if (k == "checksum") continue;
    crc.update(k);
    crc.update(v);
  }
  if (payload_bytes != nullptr) *payload_bytes = bytes;
  return crc.value();
}

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08" PRIx32, v);
  return buf;
}

// A metadata value as a decimal number (no sign for unsigned ones, no spaces), within
// [lo, hi]; a missing or malformed one is an error naming the file.
template <class T>
T number(const Metadata& m, const std::string& key, const std::string& path, T lo = std::numeric_limits<T>::min(),
         T hi = std::numeric_limits<T>::max()) {
  auto it = m.find(key);
  GR_CHECK(it != m.end(), "load_snapshot: '", path, "' has no '", key, "' in its metadata");
  const std::string& text = it->second;
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  GR_CHECK(ec == std::errc() && end == text.data() + text.size() && !text.empty(), "load_snapshot: '", path,
           "': metadata '", key, "' is not a number: '", text, "'");
  GR_CHECK(v >= lo && v <= hi, "load_snapshot: '", path, "': metadata '", key, "' is ", v, ", outside [", lo, ", ",
           hi, "]");
  return v;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

std::string snapshot_checksum(const OrderedDict<Tensor>& tensors, const Metadata& metadata) {
  return hex(checksum(tensors, metadata, nullptr));
}

Snapshot capture_snapshot(const nn::Module& model, const optim::Optimizer* optimizer, const optim::LRScheduler* scheduler) {
  Snapshot s;
  s.model = model.state_dict();
  if (optimizer != nullptr) s.optimizer = optimizer->state_dict();
  if (scheduler != nullptr) s.scheduler_last_epoch = scheduler->last_epoch();
  s.generators["default"] = default_generator().state();
  return s;
}

void save_snapshot(const std::string& path, const Snapshot& s) {
  OrderedDict<Tensor> tensors;
  for (const auto& [k, t] : s.model) tensors.insert("model." + k, t);
  for (const auto& [k, t] : s.optimizer) tensors.insert("optimizer." + k, t);
  Metadata m;
  m["format"] = kFormat;
  m["version"] = std::to_string(Snapshot::kVersion);
  m["epoch"] = std::to_string(s.epoch);
  m["step_in_epoch"] = std::to_string(s.step_in_epoch);
  m["global_step"] = std::to_string(s.global_step);
  m["world_size"] = std::to_string(s.world_size);
  m["scheduler_last_epoch"] = std::to_string(s.scheduler_last_epoch);
  for (const auto& [name, g] : s.generators) {
    m["generator." + name + ".seed"] = std::to_string(g.seed);
    m["generator." + name + ".offset"] = std::to_string(g.offset);
  }
  for (const auto& [k, v] : s.user) m["user." + k] = v;
  uint64_t payload = 0;
  for (const auto& [k, t] : tensors) payload += static_cast<uint64_t>(t.numel()) * element_size(t.scalar_type());
  m["payload_bytes"] = std::to_string(payload);  // covered by the checksum too
  m["checksum"] = snapshot_checksum(tensors, m);
  save(tensors, path, m);
}

Snapshot load_snapshot(const std::string& path, int64_t expected_world_size) {
  Metadata m;
  OrderedDict<Tensor> tensors;
  try {
    tensors = load(path, &m);
  } catch (const Error& e) {
    GR_ERROR("load_snapshot: cannot read snapshot '", path, "' (missing, truncated or corrupt): ", e.message());
  }
  auto format = m.find("format");
  GR_CHECK(format != m.end() && format->second == kFormat, "load_snapshot: '", path,
           "' is a safetensors file but not a gradring snapshot (no format '", kFormat, "' in its metadata)");
  auto version = number<int64_t>(m, "version", path);
  GR_CHECK(version == Snapshot::kVersion, "load_snapshot: '", path, "' has snapshot version ", version,
           " but this build reads version ", Snapshot::kVersion);
  auto stored = m.find("checksum");
  GR_CHECK(stored != m.end(), "load_snapshot: '", path, "' has no checksum");
  uint64_t payload = 0;
  std::string actual = hex(checksum(tensors, m, &payload));
  auto expected_payload = number<uint64_t>(m, "payload_bytes", path);
  GR_CHECK(payload == expected_payload, "load_snapshot: '", path, "' holds ", payload, " tensor bytes but was written with ",
           expected_payload, " (truncated or corrupt)");
  GR_CHECK(actual == stored->second, "load_snapshot: '", path, "' is corrupt: checksum ", actual, " but the file says ",
           stored->second);

  Snapshot s;
  s.path = path;
  for (const auto& [k, t] : tensors) {
    if (starts_with(k, "model."))
      s.model.insert(k.substr(6), t);
    else if (starts_with(k, "optimizer."))
      s.optimizer.insert(k.substr(10), t);
    else
      GR_ERROR("load_snapshot: '", path, "' has an unexpected tensor '", k, "'");
  }
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  s.epoch = number<int64_t>(m, "epoch", path, 0, kMax);
  s.step_in_epoch = number<int64_t>(m, "step_in_epoch", path, 0, kMax);
  s.global_step = number<int64_t>(m, "global_step", path, 0, kMax);
  s.world_size = number<int64_t>(m, "world_size", path, 1, kMax);
  s.scheduler_last_epoch = number<int64_t>(m, "scheduler_last_epoch", path, -1, kMax);
  const std::string gen = "generator.", seed = ".seed";
  for (const auto& [k, v] : m) {
    if (starts_with(k, "user.")) s.user[k.substr(5)] = v;
    if (starts_with(k, gen) && k.size() > gen.size() + seed.size() && k.compare(k.size() - seed.size(), seed.size(), seed) == 0) {
      std::string name = k.substr(gen.size(), k.size() - gen.size() - seed.size());
      s.generators[name] = {number<uint64_t>(m, k, path), number<uint64_t>(m, gen + name + ".offset", path)};
    }
  }
  GR_CHECK(expected_world_size <= 0 || s.world_size == expected_world_size, "load_snapshot: '", path,
           "' was written by a run of world size ", s.world_size, " but this run has world size ", expected_world_size,
           "; resume with the same number of ranks or remove the snapshot");
  return s;
}

void restore_snapshot(const Snapshot& s, nn::Module& model, optim::Optimizer* optimizer, optim::LRScheduler* scheduler) {
  const std::string where = "restore_snapshot: '" + s.path + "': ";
  // Check every model entry first, so that a mismatch changes nothing.
  OrderedDict<Tensor> own = model.state_dict();
  for (const auto& [k, t] : own) {
    const Tensor* saved = s.model.find(k);
    GR_CHECK(saved != nullptr, where, "the model has '", k, "' but the snapshot does not (a different model?)");
    GR_CHECK(saved->sizes() == t.sizes() && saved->scalar_type() == t.scalar_type(), where, "'", k, "' has shape ",
             saved->sizes(), " and dtype ", saved->scalar_type(), " in the snapshot but shape ", t.sizes(), " and dtype ",
             t.scalar_type(), " in the model");
  }
  for (const auto& [k, t] : s.model)
    GR_CHECK(own.contains(k), where, "the snapshot has '", k, "' which the model does not (a different model?)");
  GR_CHECK(scheduler == nullptr || s.scheduler_last_epoch >= 0, where, "a scheduler is given but the snapshot has none");
  try {
    if (optimizer != nullptr) optimizer->load_state_dict(s.optimizer);
  } catch (const Error& e) {
    GR_ERROR(where, e.message());
  }
  model.load_state_dict(s.model, true);
  if (scheduler != nullptr) scheduler->set_last_epoch(s.scheduler_last_epoch);
  if (auto it = s.generators.find("default"); it != s.generators.end()) default_generator().set_state(it->second);
}

}  // namespace gr
