// The one settings object: what each variable parses to, and a clear error for a malformed one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ember/error.h"
#include "ember/support/settings.h"

namespace {

using ember::support::Settings;

// Sets one variable for the scope and restores the previous value.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(const char* n, const char* v) : name(n) {
    const char* o = std::getenv(n);
    had = o != nullptr;
    if (had) old = o;
    setenv(n, v, 1);
  }
  ~ScopedEnv() { had ? setenv(name.c_str(), old.c_str(), 1) : unsetenv(name.c_str()); }
};

TEST(Settings, ReadsEachVariable) {
  ScopedEnv a("DEBUG", "2"), b("EMBER_THREADS", "3"), c("EMBER_CACHE_DIR", "/x/y"),
      d("EMBER_CC", "/usr/bin/gcc"), e("EMBER_ISA", "sse2"), f("EMBER_PLAN_CACHE", "0"),
      g("GRAPH", "1"), h("EMBER_DEVICE", "interp"), i("BEAM", "2"), j("EMBER_BEAM_RUNS", "3");
  const Settings s = Settings::from_environment();
  EXPECT_EQ(s.beam, 2);
  EXPECT_EQ(s.beam_runs, 3);
  EXPECT_EQ(s.debug, 2);
  EXPECT_EQ(s.threads, 3);
  EXPECT_EQ(s.cache_dir, "/x/y");
  EXPECT_EQ(s.cc, "/usr/bin/gcc");
  EXPECT_EQ(s.isa, "sse2");
  EXPECT_FALSE(s.plan_cache);
  EXPECT_TRUE(s.graph);
  EXPECT_EQ(s.device, "interp");
}

TEST(Settings, EmptyVariablesKeepTheDefaults) {
  ScopedEnv a("DEBUG", ""), b("EMBER_THREADS", ""), c("EMBER_PLAN_CACHE", ""),
      d("EMBER_DEVICE", "");
  const Settings s = Settings::from_environment();
  EXPECT_EQ(s.debug, 0);
  EXPECT_EQ(s.threads, 0);
  EXPECT_TRUE(s.plan_cache);
  EXPECT_EQ(s.device, "cpu");
}

void expect_value_error(const char* name, const char* value) {
  ScopedEnv v(name, value);
  try {
    Settings::from_environment();
    ADD_FAILURE() << name << "=" << value << " was accepted";
  } catch (const ember::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find(std::string(name) + "=" + value), std::string::npos)
        << e.what();
  }
}

TEST(Settings, MalformedNumbersAreValueErrorsNamingTheVariable) {
  expect_value_error("DEBUG", "yes");
  expect_value_error("DEBUG", "-1");
  expect_value_error("EMBER_THREADS", "0");
  expect_value_error("EMBER_THREADS", "4x");
  expect_value_error("PROFILE", "on");
  expect_value_error("GRAPH", "true");
  expect_value_error("EMBER_PLAN_CACHE", "off");
  expect_value_error("BEAM", "-1");
  expect_value_error("BEAM", "two");
  expect_value_error("EMBER_BEAM_RUNS", "0");
}

}  // namespace
