#include "compiler/pass_log.hpp"

#include "compiler/ir/printer.hpp"
#include "runtime/env.hpp"

#include <fmt/format.h>

#include <iostream>

namespace loom::ir {

PassLog::PassLog(const std::string& kernel_name) : name_(kernel_name) {
    if (env::debug_enabled("passes")) out_ = &std::cerr;
}

PassLog::PassLog(const std::string& kernel_name, std::ostream& out) : name_(kernel_name), out_(&out) {}

void PassLog::record(const char* pass, const Stmt& before, const Stmt& after) {
    if (!out_) return;
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
    if (before.same_as(after)) {
        *out_ << fmt::format("--- [{}] {}: unchanged ({:.1f} us)\n", name_, pass, us);
        return;
    }
    *out_ << fmt::format("--- [{}] after {} ({:.1f} us):\n{}", name_, pass, us, to_string(after));
}

void PassLog::note(const char* pass, const std::string& text) {
    if (!out_) return;
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
    *out_ << fmt::format("--- [{}] {} ({:.1f} us): {}\n", name_, pass, us, text);
}

} // namespace loom::ir
