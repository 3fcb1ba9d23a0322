// The default process group: rendezvous resolution, the store, the backend registry.
#include "distributed/backends/init.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "core/error.h"
#include "distributed/store/file_store.h"
#include "distributed/store/prefix_store.h"
#include "distributed/backends/process_group_debug.h"
#include "distributed/store/tcp_store.h"
#include "distributed/backends/work.h"

namespace gr::distributed {

namespace {

struct Backend {
  BackendFactory factory;
  bool uses_store;
};

std::mutex g_mutex;
std::map<std::string, Backend>& backends() {
  static std::map<std::string, Backend> m;
  return m;
}

struct DefaultGroup {
  ProcessGroupPtr group;
  std::shared_ptr<Store> store;  // null for backends with their own rendezvous
  std::string backend;
  int next_group_id = 0;
};
DefaultGroup g_default;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int parse_int(const char* name, const char* value) {
  char* end = nullptr;
  long v = std::strtol(value, &end, 10);
  GR_CHECK(end && *end == '\0' && v >= 0 && v < (1L << 30), "init_process_group: environment variable ", name, "='",
           value, "' is not a non-negative integer");
  return static_cast<int>(v);
}

// First host of a SLURM node list: "node[01-04,07],gpu5" -> "node01".
std::string first_slurm_host(const std::string& list) {
  std::string host;
  size_t i = 0;
  for (; i < list.size() && list[i] != ',' && list[i] != '['; ++i) host += list[i];
  if (i < list.size() && list[i] == '[') {
    ++i;
    while (i < list.size() && list[i] != '-' && list[i] != ',' && list[i] != ']') host += list[i++];
  }
  return host;
}

// Every rank announces itself, then waits for all the others; a timeout names the ranks
// that never arrived.
void wait_for_all_ranks(Store& store, int rank, int world_size, std::chrono::milliseconds timeout) {
  store.set("arrived/" + std::to_string(rank), std::string("1"));
  std::vector<std::string> keys;
  for (int k = 0; k < world_size; ++k) keys.push_back("arrived/" + std::to_string(k));
  try {
    store.wait(keys, timeout);
  } catch (const gr::Error&) {
    std::string missing;
    for (int k = 0; k < world_size; ++k)
      if (!store.check({keys[k]})) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
    GR_ERROR("init_process_group: rank ", rank, " waited ", timeout.count() / 1000.0, " s for rank(s) ", missing,
             " of ", world_size, " to join; did every rank start, with the same MASTER_ADDR and MASTER_PORT?");
  }
}

}  // namespace

Rendezvous resolve_rendezvous(const InitOptions& o) {
  Rendezvous r;
  const char* rank = env("RANK");
  const char* size = env("WORLD_SIZE");
  bool slurm = !rank && !size && env("SLURM_PROCID") && env("SLURM_NTASKS");
  r.source = o.rank >= 0 ? "arguments" : slurm ? "SLURM" : "env://";
  r.rank = o.rank >= 0 ? o.rank : rank ? parse_int("RANK", rank) : slurm ? parse_int("SLURM_PROCID", env("SLURM_PROCID")) : -1;
  r.world_size = o.world_size >= 0 ? o.world_size
                 : size            ? parse_int("WORLD_SIZE", size)
                 : slurm           ? parse_int("SLURM_NTASKS", env("SLURM_NTASKS"))
                                   : -1;
  GR_CHECK(r.rank >= 0, "init_process_group: no rank: set RANK (and WORLD_SIZE, MASTER_ADDR, MASTER_PORT), run under "
                        "gradring-run or SLURM, or pass InitOptions::rank");
  GR_CHECK(r.world_size >= 1, "init_process_group: no world size: set WORLD_SIZE (at least 1) or pass "
                              "InitOptions::world_size");
  GR_CHECK(r.rank < r.world_size, "init_process_group: RANK (", r.rank, ") must be smaller than WORLD_SIZE (",
           r.world_size, ")");
  const char* local = env("LOCAL_RANK") ? env("LOCAL_RANK") : slurm ? env("SLURM_LOCALID") : nullptr;
  r.local_rank = local ? parse_int("LOCAL_RANK", local) : 0;

  const std::string& m = o.init_method;
  if (m.rfind("file://", 0) == 0) {
    r.file = m.substr(7);
    GR_CHECK(!r.file.empty(), "init_process_group: init_method '", m, "' has no path");
    return r;
  }
  if (m.rfind("tcp://", 0) == 0) {
    std::string hostport = m.substr(6);
    size_t colon = hostport.rfind(':');
    GR_CHECK(colon != std::string::npos && colon > 0, "init_process_group: init_method '", m,
             "' must look like tcp://host:port");
    r.master_addr = hostport.substr(0, colon);
    r.master_port = parse_int("port of init_method", hostport.substr(colon + 1).c_str());
  } else {
    GR_CHECK(m == "env://", "init_process_group: unknown init_method '", m, "' (expected env://, tcp:// or file://)");
    const char* addr = env("MASTER_ADDR");
    if (!addr && slurm && env("SLURM_JOB_NODELIST")) {
      static std::string host;
      host = first_slurm_host(env("SLURM_JOB_NODELIST"));
      addr = host.c_str();
    }
    GR_CHECK(addr, "init_process_group: MASTER_ADDR is not set (the host of rank 0, e.g. 127.0.0.1)");
    const char* port = env("MASTER_PORT");
    GR_CHECK(port || slurm, "init_process_group: MASTER_PORT is not set (a free TCP port on the host of rank 0)");
    r.master_addr = addr;
    r.master_port = port ? parse_int("MASTER_PORT", port) : 29500;
  }
  GR_CHECK(r.master_port > 0 && r.master_port < 65536, "init_process_group: port ", r.master_port,
           " is out of range [1, 65535]");
  return r;
}

void register_backend(const std::string& name, BackendFactory factory, bool uses_store) {
  std::lock_guard lock(g_mutex);
  backends()[name] = {std::move(factory), uses_store};
}

std::vector<std::string> registered_backends() {
  std::lock_guard lock(g_mutex);
  std::vector<std::string> names;
  for (const auto& [name, b] : backends()) names.push_back(name);
  return names;
}

static Backend find_backend(const std::string& name) {
  std::lock_guard lock(g_mutex);
  auto it = backends().find(name);
  if (it != backends().end()) return it->second;
  std::string known;
  for (const auto& [n, b] : backends()) known += (known.empty() ? "" : ", ") + n;
  GR_CHECK(name != "nccl", "init_process_group: backend 'nccl' is not in this build (this build has: ", known,
           "); it needs the CUDA backend and NCCL 2.14+: configure with -DGRADRING_CUDA=ON -DGRADRING_NCCL=ON "
           "(NCCL_ROOT for a non-standard install)");
  GR_ERROR("init_process_group: unknown backend '", name, "' (this build has: ", known, ")");
}

// GRADRING_DISTRIBUTED_DEBUG=DETAIL wraps a group in a DebugProcessGroup, whose fingerprints
// are CPU tensors: a group of device tensors (nccl) checks them on a gloo companion group made
// over the same store (in a namespace of its own).
static ProcessGroupPtr wrap_for_debug(ProcessGroupPtr group, const std::string& backend, const BackendContext& ctx) {
  if (!group || debug_level() != DebugLevel::Detail) return group;
  if (backend != "nccl") return distributed::wrap_for_debug(std::move(group));
  BackendContext checker_ctx = ctx;
  checker_ctx.store = std::make_shared<PrefixStore>("debug_checker", ctx.store);
  ProcessGroupPtr checker = find_backend("gloo").factory(checker_ctx);
  checker->set_group_name("debug_checker", ctx.members);
  checker->set_timeout(ctx.timeout);
  return std::make_shared<DebugProcessGroup>(std::move(group), std::move(checker));
}

ProcessGroupPtr init_process_group(const InitOptions& o) {
  GR_CHECK(!is_initialized(), "init_process_group: the default process group is already initialized; call "
                              "destroy_process_group() first");
  Backend backend = find_backend(o.backend);
  debug_level();  // a bad GRADRING_DISTRIBUTED_DEBUG fails here, before the rendezvous
  Work::parse_spin_limit(std::getenv("GRADRING_WAIT_SPIN_US"));  // and so does a bad GRADRING_WAIT_SPIN_US
  DefaultGroup g;
  g.backend = o.backend;
  if (!backend.uses_store) {
    g.group = backend.factory({nullptr, o.rank, o.world_size, {}, o.timeout});
    std::vector<int> members(static_cast<size_t>(g.group->size()));
    for (int i = 0; i < g.group->size(); ++i) members[i] = i;
    g.group->set_group_name("default_pg", members);
  } else {
    Rendezvous r = resolve_rendezvous(o);
    std::shared_ptr<Store> store = o.store;
    if (!store && !r.file.empty()) {
      store = std::make_shared<FileStore>(r.file, r.world_size);
    } else if (!store) {
      TCPStoreOptions so;
      so.is_server = r.rank == 0;
      so.world_size = r.world_size;
      so.wait_for_workers = false;  // arrivals are checked per rank below, to name the missing ones
      so.timeout = o.timeout;
      store = std::make_shared<TCPStore>(r.master_addr, r.master_port, so);
    }
    store->set_label("rank " + std::to_string(r.rank));
    store->set_timeout(o.timeout);
    // A fresh namespace per launcher restart, so keys of a failed attempt are never read.
    const char* attempt = env("GRADRING_RESTART_COUNT");
    g.store = std::make_shared<PrefixStore>(std::string("attempt") + (attempt ? attempt : "0"), store);
    wait_for_all_ranks(*g.store, r.rank, r.world_size, o.timeout);
    std::vector<int> members(static_cast<size_t>(r.world_size));
    for (int i = 0; i < r.world_size; ++i) members[i] = i;
    const BackendContext ctx{std::make_shared<PrefixStore>("default_pg", g.store), r.rank, r.world_size, members,
                             o.timeout};
    ProcessGroupPtr group = backend.factory(ctx);
    group->set_group_name("default_pg", members);
    g.group = wrap_for_debug(std::move(group), o.backend, ctx);
  }
  set_flight_recorder_rank(g.group->rank());
  g.group->set_timeout(o.timeout);
  if (!backend.uses_store) g.group = wrap_for_debug(std::move(g.group));  // GRADRING_DISTRIBUTED_DEBUG=DETAIL
  std::lock_guard lock(g_mutex);
  g_default = std::move(g);
  return g_default.group;
}

ProcessGroupPtr init_process_group(const std::string& backend) {
  InitOptions o;
  o.backend = backend;
  return init_process_group(o);
}

bool is_initialized() {
  std::lock_guard lock(g_mutex);
  return g_default.group != nullptr;
}

ProcessGroupPtr default_group() {
  std::lock_guard lock(g_mutex);
  GR_CHECK(g_default.group != nullptr, "no default process group: call gr::distributed::init_process_group() first");
  return g_default.group;
}

int get_rank() { return default_group()->rank(); }
int get_world_size() { return default_group()->size(); }

void destroy_process_group() {
  std::lock_guard lock(g_mutex);
  g_default = DefaultGroup{};
}

ProcessGroupPtr new_group(const std::vector<int>& ranks) {
  ProcessGroupPtr parent = default_group();
  std::shared_ptr<Store> store;
  std::string backend_name;
  int id = 0;
  {
    std::lock_guard lock(g_mutex);
    store = g_default.store;
    backend_name = g_default.backend;
    id = g_default.next_group_id++;
  }
  std::vector<int> members = ranks;
  std::sort(members.begin(), members.end());
  GR_CHECK(std::adjacent_find(members.begin(), members.end()) == members.end(), "new_group: ranks repeat");
  for (int r : members)
    GR_CHECK(r >= 0 && r < parent->size(), "new_group: rank ", r, " is not in the default group of size ",
             parent->size());
  auto me = std::find(members.begin(), members.end(), parent->rank());
  Backend backend = find_backend(backend_name);
  // Every rank calls new_group, members or not (MPI needs all for its split).
  BackendContext ctx{store ? std::make_shared<PrefixStore>("group" + std::to_string(id), store) : nullptr,
                     me == members.end() ? -1 : static_cast<int>(me - members.begin()), static_cast<int>(members.size()),
                     members, parent->timeout()};
  ProcessGroupPtr group = backend.factory(ctx);
  if (group) group->set_timeout(parent->timeout());
  if (group) group->set_group_name("group" + std::to_string(id), members);
  return wrap_for_debug(std::move(group), backend_name, ctx);
}

}  // namespace gr::distributed
