// PrefixStore: every operation through the view, keys landing under "prefix/", nesting,
// and the view's own timeout.
#include <filesystem>
#include <thread>

#include "distributed/store/file_store.h"
#include "distributed/store/prefix_store.h"
#include "distributed/store/tcp_store.h"
#include "test_store_util.h"

using namespace gr;
using namespace gr::distributed;
using namespace gr::test;
using namespace std::chrono_literals;

TEST_CASE("PrefixStore: every operation, with keys under prefix/ in the underlying store") {
  TCPStoreOptions o;
  o.is_server = true;
  o.timeout = 10s;
  auto base = std::make_shared<TCPStore>("127.0.0.1", 0, o);
  PrefixStore view("pg0", base);
  check_store_operations(view);
  view.set("k", "v");
  CHECK(base->get_string("pg0/k") == "v");
  CHECK(view.add("n", 3) == 3);
  CHECK(base->get_string("pg0/n") == "3");
  CHECK(view.check({"k", "n"}));
  CHECK_FALSE(base->check({"k"}));
  base->set("pg0/from base", "x");
  CHECK(view.get_string("from base") == "x");

  // Two views of one store do not see each other's keys; views nest.
  PrefixStore other("pg1", base);
  CHECK_FALSE(other.check({"k"}));
  auto inner = std::make_shared<PrefixStore>("a", base);
  PrefixStore nested("b", inner);
  nested.set("key", "deep");
  CHECK(base->get_string("a/b/key") == "deep");
  CHECK(inner->get_string("b/key") == "deep");
  CHECK(view.num_keys() == base->num_keys());  // counts the whole store, as torch does

  CHECK(error_of([] { PrefixStore("p", nullptr); }).find("PrefixStore: the underlying store is null") != std::string::npos);
}

TEST_CASE("PrefixStore: blocking get through the view, and the view's own timeout") {
  auto path = (std::filesystem::temp_directory_path() / ("gradring_prefix_" + std::to_string(::getpid()))).string();
  std::filesystem::remove(path);
  {
    auto base = std::make_shared<FileStore>(path, -1, 10s);
    base->set_label("rank 5");
    PrefixStore view("job", base);
    CHECK(view.timeout() == 10s);
    CHECK(view.label() == "rank 5");
    std::thread t([&] {
      std::this_thread::sleep_for(50ms);
      base->set("job/late", "1");
    });
    CHECK(view.get_string("late") == "1");
    t.join();
    view.set_timeout(100ms);
    std::string msg = error_of([&] { view.get("never"); });
    CHECK(msg.find("rank 5 waited 100 ms for key 'job/never'") != std::string::npos);
    msg = error_of([&] { view.wait({"x"}, 50ms); });
    CHECK(msg.find("rank 5 waited 50 ms for key 'job/x'") != std::string::npos);
  }
  std::filesystem::remove(path);
}
