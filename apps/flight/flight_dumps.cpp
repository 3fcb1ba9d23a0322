// Reading flight recorder dumps: every field is checked for its type and range before use
// (a dump may come from a job that crashed, or be edited by hand), with errors that name the
// file, the group, the entry and the field.
#include "flight/flight_dumps.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/error.h"

namespace gr::flight {

namespace {

using nlohmann::json;

// One JSON object of a dump and where it is ("rank1.json: group 'default_pg' entry 3").
class Fields {
 public:
  Fields(const json& object, std::string where) : j_(object), where_(std::move(where)) {
    GR_CHECK(j_.is_object(), where_, " is not a JSON object");
  }
  bool has(const char* key) const { return j_.contains(key); }
  std::string text(const char* key, const std::string& otherwise) const {
    if (!has(key)) return otherwise;
    GR_CHECK(j_[key].is_string(), where_, ": \"", key, "\" is not a string");
    return j_[key].get<std::string>();
  }
  int64_t integer(const char* key, int64_t otherwise, int64_t lo, int64_t hi) const {
    if (!has(key)) return otherwise;
    return integer_value(j_[key], std::string("\"") + key + "\"", lo, hi);
  }
  const json& array(const char* key) const {
    GR_CHECK(has(key), where_, " has no \"", key, "\"");
    GR_CHECK(j_[key].is_array(), where_, ": \"", key, "\" is not a list");
    return j_[key];
  }
  // `v` as an integer in [lo, hi]; `what` names it in the error.
  int64_t integer_value(const json& v, const std::string& what, int64_t lo, int64_t hi) const {
    bool ok = v.is_number_integer();
    if (ok && v.is_number_unsigned()) ok = v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX);
    if (ok) ok = v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    GR_CHECK(ok, where_, ": ", what, " is ", v.dump(), ", not an integer from ", lo, " to ", hi);
    return v.get<int64_t>();
  }
  const std::string& where() const { return where_; }

 private:
  const json& j_;
  std::string where_;
};

std::string shape_text(const Fields& e, const json& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(e.integer_value(shape[i], "a dimension of \"shape\"", INT64_MIN, INT64_MAX));
  return s + "]";
}

// What every rank must agree on: "allreduce (sum) float32 [1000] root 0 x2".
std::string signature_of(const Fields& e) {
  std::string s = e.text("op", "?");
  if (e.has("reduce_op")) s += " (" + e.text("reduce_op", "") + ")";
  if (e.has("dtype")) s += " " + e.text("dtype", "") + " " + shape_text(e, e.array("shape"));
  if (e.has("root")) s += " root " + std::to_string(e.integer("root", 0, INT32_MIN, INT32_MAX));
  if (const int64_t tensors = e.integer("tensors", 1, INT32_MIN, INT32_MAX); tensors > 1)
    s += " x" + std::to_string(tensors);
  return s;
}

void read_group(const json& g, const std::string& where, const DumpInfo& info, std::set<std::string>& seen,
                Dumps& dumps) {
  Fields group(g, where);
  const std::string name = group.text("name", "unnamed");
  if (!seen.insert(name).second) return;  // a live group first, then destroyed ones of the same name
  const std::string here = where + " ('" + name + "')";
  std::vector<int> members;
  for (const json& r : group.array("ranks"))
    members.push_back(static_cast<int>(group.integer_value(r, "a member of \"ranks\"", 0, kMaxRanks - 1)));
  const json& entries = group.array("entries");
  Group& out = dumps.groups[name];
  out.name = name;
  out.backend = group.text("backend", "?");
  out.members = std::move(members);
  RankView& view = out.ranks[info.rank];
  view.rank = info.rank;
  for (size_t i = 0; i < entries.size(); ++i) {
    Fields e(entries[i], here + " entry " + std::to_string(i));
    if (!e.has("seq")) continue;  // send/recv: ranks differ by design
    Call c{e.integer("seq", 0, 0, INT64_MAX), signature_of(e), e.text("state", "?"), {}};
    if (e.has("stack")) {
      for (const json& frame : e.array("stack")) {
        GR_CHECK(frame.is_string(), e.where(), ": a frame of \"stack\" is not a string");
        c.stack.push_back(frame.get<std::string>());
      }
    }
    view.calls[c.seq] = std::move(c);
  }
  dumps.world = std::max(dumps.world, static_cast<int>(out.members.size()));
}

}  // namespace

void read_dump(const std::string& text, const std::string& source, Dumps& dumps) {
  json d;
  try {
    d = json::parse(text);
  } catch (const json::exception& e) {
    GR_ERROR(source, " is not a flight recorder dump: ", e.what());
  }
  GR_CHECK(d.is_object() && d.contains("format") && d["format"] == "gradring-flight-recorder", source,
           " is not a flight recorder dump (no \"format\")");
  Fields top(d, source);
  DumpInfo info{static_cast<int>(top.integer("rank", 0, 0, kMaxRanks - 1)),
                static_cast<int>(top.integer("world_size", 0, 0, kMaxRanks)), top.text("reason", "")};
  const json& groups = top.array("groups");
  dumps.dumps[info.rank] = info;
  dumps.world = std::max(dumps.world, info.world_size);
  std::set<std::string> seen;
  for (size_t i = 0; i < groups.size(); ++i) read_group(groups[i], source + ": group " + std::to_string(i), info, seen, dumps);
}

bool parse_frame(const std::string& text, Frame& out) {
  // The first '(' ends FILE: FUNCTION may hold parentheses of its own (a demangled name).
  const size_t open = text.find('('), plus = text.rfind("+0x");
  if (open == std::string::npos || plus == std::string::npos || plus < open) return false;
  const char* hex = text.data() + plus + 3;
  const char* end = text.data() + text.size();
  if (end > hex && end[-1] == ')') --end;
  uint64_t offset = 0;
  auto [stop, ec] = std::from_chars(hex, end, offset, 16);
  if (ec != std::errc() || stop != end) return false;
  out = {text.substr(0, open), text.substr(open + 1, plus - open - 1), offset};
  return true;
}

}  // namespace gr::flight
