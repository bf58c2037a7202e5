// LOOM_DEBUG=passes: the IR after each pass that changed it, with the time each pass took.
#pragma once

#include "compiler/ir/ir.hpp"

#include <chrono>
#include <ostream>
#include <string>

namespace loom::ir {

class PassLog {
public:
    /// Enabled when the comma list LOOM_DEBUG names "passes" (or "all"); see runtime/env.hpp.
    explicit PassLog(const std::string& kernel_name);
    /// Writes to `out` instead of stderr, always enabled (for tests).
    PassLog(const std::string& kernel_name, std::ostream& out);

    bool enabled() const { return out_ != nullptr; }
    /// Call before a pass: starts its clock.
    void start() { t0_ = std::chrono::steady_clock::now(); }
    /// Call after a pass with its input and output; prints "unchanged" when it returned the input.
    void record(const char* pass, const Stmt& before, const Stmt& after);
    void note(const char* pass, const std::string& text);

private:
    std::string name_;
    std::ostream* out_ = nullptr;
    std::chrono::steady_clock::time_point t0_;
};

} // namespace loom::ir
