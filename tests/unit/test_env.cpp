// runtime/env: how loom reads its environment variables.
#include "runtime/env.hpp"
#include "tests/support/scoped_env.hpp"

#include <gtest/gtest.h>

namespace loom {
namespace {

using loom::test::ScopedEnv;

TEST(Env, GetAndValueTellUnsetFromEmpty) {
    ScopedEnv unset("LOOM_TEST_ENV", nullptr);
    EXPECT_FALSE(env::get("LOOM_TEST_ENV").has_value());
    EXPECT_EQ(env::value("LOOM_TEST_ENV"), "");
    ScopedEnv empty("LOOM_TEST_ENV", "");
    EXPECT_EQ(env::get("LOOM_TEST_ENV"), std::optional<std::string>(""));
    ScopedEnv set("LOOM_TEST_ENV", "x y");
    EXPECT_EQ(env::value("LOOM_TEST_ENV"), "x y");
}

TEST(Env, FlagsAcceptTheUsualSpellings) {
    for (const char* on : {"1", "on", "TRUE", "Yes", " 1 "}) {
        ScopedEnv e("LOOM_TEST_FLAG", on);
        EXPECT_TRUE(env::flag("LOOM_TEST_FLAG")) << on;
    }
    for (const char* off : {"0", "OFF", "false", "no"}) {
        ScopedEnv e("LOOM_TEST_FLAG", off);
        EXPECT_FALSE(env::flag("LOOM_TEST_FLAG", true)) << off;
    }
    ScopedEnv empty("LOOM_TEST_FLAG", "");
    EXPECT_TRUE(env::flag("LOOM_TEST_FLAG", true));
    EXPECT_FALSE(env::flag("LOOM_TEST_FLAG", false));
}

TEST(Env, ABadFlagWarnsOnceAndGivesTheDefault) {
    ScopedEnv e("LOOM_TEST_BAD_FLAG", "maybe");
    ::testing::internal::CaptureStderr();
    EXPECT_TRUE(env::flag("LOOM_TEST_BAD_FLAG", true));
    EXPECT_TRUE(env::flag("LOOM_TEST_BAD_FLAG", true));
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("LOOM_TEST_BAD_FLAG is 'maybe'"), std::string::npos) << err;
    EXPECT_NE(err.find("1/on/true/yes"), std::string::npos) << err;
    EXPECT_EQ(err.find("warning", err.find("warning") + 1), std::string::npos)
        << "warned twice:\n" << err;
}

TEST(Env, UnsignedNumbers) {
    ScopedEnv e("LOOM_TEST_NUMBER", "250");
    EXPECT_EQ(env::unsigned_number("LOOM_TEST_NUMBER", 7, "MiB"), 250u);
    ScopedEnv bad("LOOM_TEST_NUMBER", "-3");
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(env::unsigned_number("LOOM_TEST_NUMBER", 7, "MiB"), 7u);
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("LOOM_TEST_NUMBER is '-3', but it must be a whole number (MiB)"),
              std::string::npos)
        << err;
}

TEST(Env, DebugIsACommaList) {
    ScopedEnv e("LOOM_DEBUG", "passes, cache");
    EXPECT_TRUE(env::debug_enabled("passes"));
    EXPECT_TRUE(env::debug_enabled("cache"));
    EXPECT_FALSE(env::debug_enabled("launch"));
    ScopedEnv substring("LOOM_DEBUG", "nocache");
    EXPECT_FALSE(env::debug_enabled("cache"));
    ScopedEnv all("LOOM_DEBUG", "all");
    EXPECT_TRUE(env::debug_enabled("cache"));
    ScopedEnv unset("LOOM_DEBUG", nullptr);
    EXPECT_FALSE(env::debug_enabled("passes"));
}

} // namespace
} // namespace loom
