#include "compiler/ir/printer.hpp"

#include <loom/config.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace loom {
using namespace ir;

std::string_view target_name(Target t) {
    switch (t) {
    case Target::CUDA: return "CUDA";
    case Target::CPU: return "CPU";
    }
    return "?";
}

std::string Bound::describe() const {
    switch (kind_) {
    case Kind::Index: return fmt::format("{}", index_);
    case Kind::End: return "";
    case Kind::Expression: return to_string(expr_);
    }
    return "?";
}

std::string SliceDim::describe() const {
    if (single) return start.kind() == Bound::Kind::End ? "end" : start.describe();
    std::string s = (start.kind() == Bound::Kind::Index && start.index() == 0) ? "" : start.describe();
    s += ":" + stop.describe();
    if (step != 1) s += fmt::format(":{}", step);
    return s;
}

std::string SliceDim::as_written() const {
    // range() spells every entry but a single index; the other helpers are shorthands of it.
    auto text = [](const Bound& b) { return b.kind() == Bound::Kind::End ? "end" : b.describe(); };
    if (single) return fmt::format("at({})", text(start));
    if (start.kind() == Bound::Kind::Index && start.index() == 0 &&
        stop.kind() == Bound::Kind::End && step == 1)
        return "all()";
    return fmt::format("range({}, {}{})", text(start), text(stop),
                       step == 1 ? "" : fmt::format(", {}", step));
}

std::string Slice::describe() const {
    std::vector<std::string> parts;
    for (auto& d : dims) parts.push_back(d.describe());
    return fmt::format("[{}]", fmt::join(parts, ", "));
}

} // namespace loom
