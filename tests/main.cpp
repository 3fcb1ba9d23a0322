// doctest's main() for every suite, and a listener that names each skipped test case and why
// (Note [Skips] in test_util.h).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <ostream>

namespace {

// Prints "[doctest] SKIPPED: <test case>: <why>" for every test case skipped by its decorator
// (not for those a -tc filter leaves out); scripts/check_skips reads these lines.
struct SkipListener : doctest::IReporter {
  std::ostream& out;
  explicit SkipListener(const doctest::ContextOptions& options) : out(*options.cout) {}
  void test_case_skipped(const doctest::TestCaseData& t) override {
    if (!t.m_skip) return;
    out << "[doctest] SKIPPED: " << t.m_name << ": "
        << (t.m_description && *t.m_description ? t.m_description : "(no reason given)") << "\n";
  }
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
};

}  // namespace

DOCTEST_REGISTER_LISTENER("skips", 1, SkipListener);
