#include "runtime/nvrtc_compiler.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <gtest/gtest.h>

namespace loom::test {

void expect_compiles_for_sm90(const Kernel& kernel) {
    NvrtcOptions o;
    o.arch = 90;
    o.fast_math = kernel.config().fast_math;
    try {
        NvrtcResult r = nvrtc_compile(kernel.source(), kernel.name(), o);
        EXPECT_GT(r.cubin.size(), 0u) << "NVRTC produced an empty CUBIN for " << kernel.name();
        EXPECT_EQ(r.log, "") << "NVRTC warned on kernel " << kernel.name() << ":\n"
                             << r.log << "\n" << numbered_source(kernel.source());
    } catch (const CompileError& e) {
        ADD_FAILURE() << e.what();
    }
}

} // namespace loom::test
