// TCPStore wire encoding and incremental, limit-checked parsing (see tcp_store_wire.h).
#include "distributed/store/tcp_store_wire.h"

#include <bit>
#include <cstring>

#include "distributed/store/store_util.h"

namespace gr::distributed::wire {

static void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  size_t at = out.size();
  out.resize(at + 8);
  std::memcpy(out.data() + at, &v, 8);
}

template <class T>
static void put_bytes(std::vector<uint8_t>& out, const T& s) {
  put_u64(out, s.size());
  out.insert(out.end(), reinterpret_cast<const uint8_t*>(s.data()), reinterpret_cast<const uint8_t*>(s.data()) + s.size());
}

static void put_keys(std::vector<uint8_t>& out, const std::vector<std::string>& keys) {
  put_u64(out, keys.size());
  for (const auto& k : keys) put_bytes(out, k);
}

// Reads from a possibly incomplete buffer. After the first shortage or limit violation
// every further read does nothing, and result() reports it.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool good() const { return !short_ && !malformed_; }
  void reject() { malformed_ = true; }

  uint8_t u8() {
    if (!need(1)) return 0;
    return data_[pos_++];
  }
  uint64_t u64() {
    if (!need(8)) return 0;
    uint64_t v;
    std::memcpy(&v, data_ + pos_, 8);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    pos_ += 8;
    return v;
  }
  template <class T>
  void bytes(T& out) {
    uint64_t n = u64();
    if (!good()) return;
    if (n > kMaxStoreValueBytes) return reject();
    if (!need(n)) return;
    auto* p = reinterpret_cast<const typename T::value_type*>(data_ + pos_);
    out.assign(p, p + n);
    pos_ += n;
  }
  void keys(std::vector<std::string>& out) {
    uint64_t n = u64();
    if (!good()) return;
    if (n > kMaxStoreKeys) return reject();
    for (uint64_t i = 0; i < n && good(); ++i) bytes(out.emplace_back());
  }
  Parse result() const {
    if (malformed_) return {Parse::Malformed, 0};
    if (short_) return {Parse::Incomplete, need_};
    return {Parse::Complete, pos_};
  }

 private:
  bool need(uint64_t n) {
    if (!good()) return false;
    if (n > size_ - pos_) {
      short_ = true;
      need_ = pos_ + n;
      return false;
    }
    return true;
  }

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  size_t need_ = 0;
  bool short_ = false;
  bool malformed_ = false;
};

void append_request(std::vector<uint8_t>& out, const Request& r) {
  out.push_back(static_cast<uint8_t>(r.op));
  switch (r.op) {
    case Op::Set:
      put_bytes(out, r.keys.at(0));
      put_bytes(out, r.value);
      break;
    case Op::Get:
      put_bytes(out, r.keys.at(0));
      put_u64(out, static_cast<uint64_t>(r.number));
      break;
    case Op::Add:
      put_bytes(out, r.keys.at(0));
      put_u64(out, static_cast<uint64_t>(r.number));
      break;
    case Op::CompareSet:
      put_bytes(out, r.keys.at(0));
      put_bytes(out, r.value);
      put_bytes(out, r.desired);
      break;
    case Op::Check:
      put_keys(out, r.keys);
      break;
    case Op::Wait:
      put_keys(out, r.keys);
      put_u64(out, static_cast<uint64_t>(r.number));
      break;
    case Op::Delete:
      put_bytes(out, r.keys.at(0));
      break;
    case Op::NumKeys:
    case Op::Join:
      break;
  }
}

Parse parse_request(const uint8_t* data, size_t size, Request& out) {
  out = Request{};
  Reader in(data, size);
  uint8_t type = in.u8();
  if (!in.good()) return in.result();
  if (type < static_cast<uint8_t>(Op::Set) || type > static_cast<uint8_t>(Op::Join)) return {Parse::Malformed, 0};
  out.op = static_cast<Op>(type);
  switch (out.op) {
    case Op::Set:
      in.bytes(out.keys.emplace_back());
      in.bytes(out.value);
      break;
    case Op::Get:
    case Op::Add:
      in.bytes(out.keys.emplace_back());
      out.number = static_cast<int64_t>(in.u64());
      break;
    case Op::CompareSet:
      in.bytes(out.keys.emplace_back());
      in.bytes(out.value);
      in.bytes(out.desired);
      break;
    case Op::Check:
      in.keys(out.keys);
      break;
    case Op::Wait:
      in.keys(out.keys);
      out.number = static_cast<int64_t>(in.u64());
      break;
    case Op::Delete:
      in.bytes(out.keys.emplace_back());
      break;
    case Op::NumKeys:
    case Op::Join:
      break;
  }
  if ((out.op == Op::Get || out.op == Op::Wait) && in.good() && out.number < 0) in.reject();
  return in.result();
}

void append_response(std::vector<uint8_t>& out, Op op, const Response& r) {
  out.push_back(static_cast<uint8_t>(r.status));
  if (r.status == Status::Error) return put_bytes(out, r.error);
  if (r.status == Status::Timeout) return put_keys(out, r.missing);
  switch (op) {
    case Op::Get:
    case Op::CompareSet:
      put_bytes(out, r.value);
      break;
    case Op::Check:
    case Op::Delete:
      out.push_back(r.number ? 1 : 0);
      break;
    case Op::Add:
    case Op::NumKeys:
    case Op::Join:
      put_u64(out, static_cast<uint64_t>(r.number));
      break;
    case Op::Set:
    case Op::Wait:
      break;
  }
}

Parse parse_response(const uint8_t* data, size_t size, Op op, Response& out) {
  out = Response{};
  Reader in(data, size);
  uint8_t status = in.u8();
  if (!in.good()) return in.result();
  if (status > static_cast<uint8_t>(Status::Error)) return {Parse::Malformed, 0};
  out.status = static_cast<Status>(status);
  if (out.status == Status::Error) {
    in.bytes(out.error);
  } else if (out.status == Status::Timeout) {
    // Only a parked request times out; a server saying so for another is not one.
    if (op != Op::Get && op != Op::Wait) return {Parse::Malformed, 0};
    in.keys(out.missing);
  } else {
    switch (op) {
      case Op::Get:
      case Op::CompareSet:
        in.bytes(out.value);
        break;
      case Op::Check:
      case Op::Delete:
        out.number = in.u8();
        if (in.good() && out.number > 1) in.reject();  // a yes/no answer
        break;
      case Op::Add:
      case Op::NumKeys:
      case Op::Join:
        out.number = static_cast<int64_t>(in.u64());
        break;
      case Op::Set:
      case Op::Wait:
        break;
    }
  }
  return in.result();
}

const char* op_name(Op op) {
  switch (op) {
    case Op::Set: return "set";
    case Op::Get: return "get";
    case Op::Add: return "add";
    case Op::CompareSet: return "compare_set";
    case Op::Check: return "check";
    case Op::Wait: return "wait";
    case Op::Delete: return "delete_key";
    case Op::NumKeys: return "num_keys";
    case Op::Join: return "join";
  }
  return "?";
}

}  // namespace gr::distributed::wire
