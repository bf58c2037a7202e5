// A test's own compile cache environment: a fresh LOOM_CACHE_DIR, and every variable that changes
// how the cache behaves unset, restored at scope end.
#pragma once

#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_dir.hpp"

namespace loom::test {

struct CacheEnv {
    TempDir dir{"loom_cache_test"};
    ScopedEnv cache_dir{"LOOM_CACHE_DIR", dir.c_str()};
    ScopedEnv cache{"LOOM_CACHE", nullptr};
    ScopedEnv max_mb{"LOOM_CACHE_MAX_MB", nullptr};
    ScopedEnv always_compile{"LOOM_ALWAYS_COMPILE", nullptr};
    ScopedEnv debug{"LOOM_DEBUG", nullptr};
    ScopedEnv dump_dir{"LOOM_DUMP_DIR", nullptr};
};

} // namespace loom::test
