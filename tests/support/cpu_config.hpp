// The config of a test kernel for the CPU target.
#pragma once

#include <loom/loom.hpp>

#include <string>

namespace loom::test {

/// A KernelConfig for Target::CPU named `name` (each kernel of a test binary gets its own name).
inline KernelConfig cpu(const std::string& name) {
    KernelConfig c;
    c.target = Target::CPU;
    c.name = name;
    return c;
}

} // namespace loom::test
