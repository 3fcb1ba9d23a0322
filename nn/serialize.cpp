// safetensors reading and writing.
#include "nn/serialize.h"

#include <bit>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <unordered_map>
#include <sstream>

#include "core/factory.h"
#include "core/native/copy.h"
#include "nn/module.h"

namespace gr {

namespace {

// Tensor bytes are copied as they are in memory; the format is little-endian.
static_assert(std::endian::native == std::endian::little, "safetensors I/O assumes a little-endian host");

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;  // as the reference implementation
constexpr uint64_t kMaxElements = 1ull << 59;       // per tensor, counting 0 dims as 1

const char* safetensors_dtype(ScalarType t) {
  switch (t) {
    case kFloat32: return "F32";
    case kFloat64: return "F64";
    case kInt64: return "I64";
    case kUInt8: return "U8";
    case kBool: return "BOOL";
    case kBFloat16: return "BF16";
    case kFloat16: return "F16";
    case kInt32: return "I32";
    case kInt16: return "I16";
    case kInt8: return "I8";
  }
  return "?";
}

bool parse_dtype(const std::string& s, ScalarType* t) {
  static const std::pair<const char*, ScalarType> table[] = {
      {"F32", kFloat32}, {"F64", kFloat64},   {"I64", kInt64}, {"U8", kUInt8}, {"BOOL", kBool},
      {"BF16", kBFloat16}, {"F16", kFloat16}, {"I32", kInt32}, {"I16", kInt16}, {"I8", kInt8}};
  for (const auto& [name, dtype] : table)
    if (s == name) {
      *t = dtype;
      return true;
    }
  return false;
}

std::string errno_text() { return std::strerror(errno); }

std::string folder_of(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& bytes) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  GR_CHECK(fd >= 0, "save: cannot create '", tmp, "': ", errno_text());
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      GR_ERROR("save: writing '", tmp, "' failed after ", done, " of ", bytes.size(), " bytes: ", why,
               "; the previous '", path, "' (if any) is unchanged");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    GR_ERROR("save: flushing '", tmp, "' to disk failed: ", why, "; the previous '", path, "' is unchanged");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    GR_ERROR("save: renaming '", tmp, "' to '", path, "' failed: ", why);
  }
  // Make the rename itself durable.
  int dir = ::open(folder_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

std::string save_bytes(const OrderedDict<Tensor>& tensors, const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<Tensor> cpu;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    GR_CHECK(name != "__metadata__", "save: '__metadata__' is reserved and cannot name a tensor");
    GR_CHECK(t.defined(), "save: tensor '", name, "' is undefined");
    Tensor c = native::contiguous(native::to_device(t.detach(), Device(kCPU)));
    uint64_t n = c.nbytes();
    header[name] = {{"dtype", safetensors_dtype(c.scalar_type())}, {"shape", c.sizes().vec()},
                    {"data_offsets", {offset, offset + n}}};
    offset += n;
    cpu.push_back(c);
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');  // keep the data 8-byte aligned
  std::string bytes;
  bytes.reserve(8 + json.size() + offset);
  uint64_t len = json.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((len >> (8 * i)) & 0xff));  // little-endian
  bytes += json;
  for (const Tensor& c : cpu) bytes.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
  return bytes;
}

void save(const OrderedDict<Tensor>& tensors, const std::string& path, const Metadata& metadata) {
  write_file_atomic(path, save_bytes(tensors, metadata));
}

void save(const nn::Module& module, const std::string& path, const Metadata& metadata) {
  save(module.state_dict(), path, metadata);
}

OrderedDict<Tensor> load(const std::string& path, Metadata* metadata) {
  std::ifstream in(path, std::ios::binary);
  GR_CHECK(in.good(), "load: cannot open '", path, "': ", errno_text());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return load_bytes(bytes, metadata, path);
}

OrderedDict<Tensor> load_bytes(const std::string& bytes, Metadata* metadata, const std::string& source) {
  const std::string where = "load: '" + source + "' is not a valid safetensors file: ";
  GR_CHECK(bytes.size() >= 8, where, "it has ", bytes.size(), " bytes, fewer than the 8-byte header length");
  uint64_t header_len = 0;
  for (int i = 0; i < 8; ++i) header_len |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  GR_CHECK(header_len <= kMaxHeaderBytes, where, "header length ", header_len, " exceeds the 100 MiB limit");
  GR_CHECK(header_len <= bytes.size() - 8, where, "header length ", header_len, " runs past the end of the file (",
           bytes.size(), " bytes; truncated?)");
  nlohmann::json header;
  // Where each name stands in the header (nlohmann::json keeps keys sorted): the order of
  // tensors of 0 bytes, which share their offset with the next tensor.
  std::unordered_map<std::string, size_t> position;
  auto note_key = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    if (depth == 1 && event == nlohmann::json::parse_event_t::key) position[parsed.get<std::string>()] = position.size();
    return true;
  };
  try {
    header = nlohmann::json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<int64_t>(header_len), note_key);
  } catch (const nlohmann::json::exception& e) {
    GR_ERROR(where, "the JSON header does not parse: ", e.what());
  }
  GR_CHECK(header.is_object(), where, "the header is not a JSON object");
  const char* data = bytes.data() + 8 + header_len;
  const uint64_t data_len = bytes.size() - 8 - header_len;

  struct Entry {
    std::string name;
    ScalarType dtype;
    std::vector<int64_t> shape;
    uint64_t begin, end;
    size_t order;  // its place in the header
  };
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      GR_CHECK(it->is_object(), where, "__metadata__ must be an object of strings");
      for (auto m = it->begin(); m != it->end(); ++m) {
        GR_CHECK(m->is_string(), where, "__metadata__ value for '", m.key(), "' is not a string");
        if (metadata) (*metadata)[m.key()] = m->get<std::string>();
      }
      continue;
    }
    const nlohmann::json& e = *it;
    const std::string& name = it.key();
    GR_CHECK(e.is_object() && e.contains("dtype") && e.contains("shape") && e.contains("data_offsets"), where,
             "entry '", name, "' needs dtype, shape and data_offsets");
    Entry entry{name, kFloat32, {}, 0, 0, position.at(name)};
    GR_CHECK(e["dtype"].is_string() && parse_dtype(e["dtype"].get<std::string>(), &entry.dtype), where, "entry '",
             name, "' has unsupported dtype ", e["dtype"].dump());
    GR_CHECK(e["shape"].is_array(), where, "entry '", name, "' has a shape that is not a list");
    // extent multiplies the dims taken as at least 1, as the strides do: bounding it keeps both
    // the strides of a tensor with a 0 dim and numel * element size (at most 8) within int64.
    uint64_t numel = 1, extent = 1;
    for (const auto& s : e["shape"]) {
      GR_CHECK(s.is_number_unsigned(), where, "entry '", name, "' has a bad dimension ", s.dump());
      uint64_t d = s.get<uint64_t>();
      GR_CHECK(std::max<uint64_t>(d, 1) <= kMaxElements / extent, where, "entry '", name, "' is too large (shape ",
               e["shape"].dump(), ")");
      entry.shape.push_back(static_cast<int64_t>(d));
      numel *= d;
      extent *= std::max<uint64_t>(d, 1);
    }
    const auto& off = e["data_offsets"];
    GR_CHECK(off.is_array() && off.size() == 2 && off[0].is_number_unsigned() && off[1].is_number_unsigned(), where,
             "entry '", name, "' needs data_offsets [begin, end]");
    entry.begin = off[0].get<uint64_t>();
    entry.end = off[1].get<uint64_t>();
    GR_CHECK(entry.begin <= entry.end && entry.end <= data_len, where, "entry '", name, "' has data_offsets [",
             entry.begin, ", ", entry.end, "] outside the ", data_len, " data bytes (truncated file?)");
    GR_CHECK(entry.end - entry.begin == numel * element_size(entry.dtype), where, "entry '", name, "' holds ",
             entry.end - entry.begin, " bytes but its shape and dtype need ", numel * element_size(entry.dtype));
    entries.push_back(std::move(entry));
  }
  // The tensors must tile the data section exactly: no overlaps, no gaps.
  // Note [Tensor order on load]: tensors come back in file order: by offset, and tensors of
  // 0 bytes (which share the next one's offset) before it, in the header's order, as save()
  // wrote them. A snapshot's checksum covers the order, so a loaded dict must keep it.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tuple(a.begin, a.end, a.order) < std::tuple(b.begin, b.end, b.order);
  });
  uint64_t expected = 0;
  for (const Entry& e : entries) {
    GR_CHECK(e.begin == expected, where, "entry '", e.name, "' starts at byte ", e.begin, " but ", expected,
             " was expected (overlapping or missing data)");
    expected = e.end;
  }
  GR_CHECK(expected == data_len, where, "the tensors cover ", expected, " of ", data_len, " data bytes");

  OrderedDict<Tensor> out;
  for (const Entry& e : entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (t.nbytes() > 0) std::memcpy(t.data_ptr(), data + e.begin, t.nbytes());
    out.insert(e.name, t);
  }
  return out;
}


}  // namespace gr
