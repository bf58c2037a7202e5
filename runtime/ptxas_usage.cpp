#include "runtime/ptxas_usage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace loom {

namespace {

/// The whole number right before `unit` in `line` ("32" in "Used 32 registers"); -1 if absent.
int number_before(const std::string& line, const char* unit) {
    std::size_t at = line.find(unit);
    if (at == std::string::npos) return -1;
    std::size_t begin = at;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
    if (begin == at) return -1;
    return std::stoi(line.substr(begin, at - begin));
}

/// The text between `prefix` + "'" and the next "'", or "" when the line does not start so.
std::string quoted_after(const std::string& line, const std::string& prefix) {
    std::size_t at = line.find(prefix + "'");
    if (at == std::string::npos) return "";
    std::size_t begin = at + prefix.size() + 1, end = line.find('\'', begin);
    return end == std::string::npos ? "" : line.substr(begin, end - begin);
}

} // namespace

std::optional<PtxasUsage> parse_ptxas_usage(const std::string& log, const std::string& function) {
    std::istringstream in(log);
    std::optional<PtxasUsage> found;
    bool in_properties = false; // the line after "Function properties for <function>"
    for (std::string line; std::getline(in, line);) {
        std::string entry = quoted_after(line, "Compiling entry function ");
        if (!entry.empty()) {
            if (found) break; // the next entry function: ours is complete
            if (function.empty() || entry == function) {
                found.emplace();
                found->function = entry;
                found->arch = quoted_after(line, "' for ");
            }
            continue;
        }
        if (!found) continue;
        if (line.find("Function properties for ") != std::string::npos) {
            in_properties = line.substr(line.rfind(' ') + 1) == found->function;
            continue;
        }
        if (in_properties) {
            in_properties = false;
            found->stack_frame_bytes = std::max(0, number_before(line, " bytes stack frame"));
            found->spill_stores_bytes = std::max(0, number_before(line, " bytes spill stores"));
            found->spill_loads_bytes = std::max(0, number_before(line, " bytes spill loads"));
            continue;
        }
        if (int registers = number_before(line, " registers"); registers >= 0) {
            found->registers = registers;
            found->barriers = std::max(0, number_before(line, " barriers"));
            found->static_shared_bytes = std::max(0, number_before(line, " bytes smem"));
        }
    }
    return found;
}

std::string describe(const PtxasUsage& u) {
    return fmt::format("{} registers, {} bytes spill stores, {} bytes spill loads, {} bytes stack "
                       "frame, {} bytes static shared memory, {} barrier(s) ({})",
                       u.registers, u.spill_stores_bytes, u.spill_loads_bytes,
                       u.stack_frame_bytes, u.static_shared_bytes, u.barriers, u.arch);
}

} // namespace loom
