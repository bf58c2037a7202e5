#include "runtime/tuning_record.hpp"

#include "runtime/sha256.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <map>
#include <sstream>

namespace loom {

namespace {

constexpr const char* kHeader = "loom-tuning 1";

std::string opt(const std::optional<int>& v) { return v ? std::to_string(*v) : ""; }

/// Reads a whole integer; nullopt for anything else.
std::optional<long long> integer(const std::string& s) {
    long long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

} // namespace

std::string to_text(const TuningRecord& r) {
    const Schedule& s = r.schedule;
    std::string out = std::string(kHeader) + "\n";
    const std::array<int, 3> block = s.block.value_or(std::array<int, 3>{0, 0, 0});
    out += fmt::format("block={},{},{}\n", block[0], block[1], block[2]);
    out += fmt::format("cells_per_thread={}\n", s.cells_per_thread);
    out += fmt::format("cells_axis={}\n", opt(s.cells_axis));
    out += fmt::format("stream_cells={}\n", s.stream_cells ? (*s.stream_cells ? "1" : "0") : "");
    out += fmt::format("shared_memory_budget={}\n",
                       s.shared_memory_budget ? std::to_string(*s.shared_memory_budget) : "");
    out += fmt::format("max_registers={}\n", s.max_registers);
    out += fmt::format("manual_launch_grid={}\n", int(s.manual_launch_grid));
    out += fmt::format("vector_width={}\n", s.vector_width);
    out += fmt::format("shared_tiles={}\n", int(s.shared_tiles));
    out += fmt::format("reduce_in_block={}\n", s.reduce_in_block ? (*s.reduce_in_block ? "1" : "0") : "");
    out += fmt::format("reduce_in_warp={}\n", s.reduce_in_warp ? (*s.reduce_in_warp ? "1" : "0") : "");
    out += fmt::format("online_softmax={}\n", s.online_softmax ? (*s.online_softmax ? "1" : "0") : "");
    out += fmt::format("tensor_cores={}\n", s.tensor_cores ? std::to_string(int(*s.tensor_cores)) : "");
    out += fmt::format("ms={:.17g}\ndefault_ms={:.17g}\n", r.ms, r.default_ms); // exact doubles
    return out;
}

std::optional<TuningRecord> tuning_record_from_text(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != kHeader) return std::nullopt;
    std::map<std::string, std::string> v;
    while (std::getline(in, line)) {
        auto eq = line.find('=');
        if (eq == std::string::npos) return std::nullopt;
        v[line.substr(0, eq)] = line.substr(eq + 1);
    }
    static const char* names[] = {"block", "cells_per_thread", "cells_axis", "stream_cells",
                                  "shared_memory_budget", "max_registers", "manual_launch_grid",
                                  "vector_width", "shared_tiles", "reduce_in_block", "reduce_in_warp", "online_softmax", "ms",
                                  "default_ms"};
    for (const char* n : names)
        if (!v.count(n)) return std::nullopt;
    TuningRecord r;
    Schedule& s = r.schedule;
    // Every integer field, checked: an unreadable entry is a miss, never a half-read schedule.
    bool ok = true;
    auto num = [&](const std::string& key) {
        auto i = integer(v[key]);
        ok = ok && i.has_value();
        return i.value_or(0);
    };
    auto maybe = [&](const std::string& key) -> std::optional<long long> {
        if (v[key].empty()) return std::nullopt;
        return num(key);
    };
    std::array<int, 3> block{};
    {
        std::istringstream b(v["block"]);
        std::string part;
        for (int d = 0; d < 3; ++d) {
            if (!std::getline(b, part, ',')) return std::nullopt;
            auto i = integer(part);
            if (!i) return std::nullopt;
            block[d] = int(*i);
        }
    }
    if (block != std::array<int, 3>{0, 0, 0}) s.block = block;
    s.cells_per_thread = int(num("cells_per_thread"));
    if (auto a = maybe("cells_axis")) s.cells_axis = int(*a);
    if (auto c = maybe("stream_cells")) s.stream_cells = *c != 0;
    if (auto b = maybe("shared_memory_budget")) s.shared_memory_budget = std::size_t(*b);
    s.max_registers = int(num("max_registers"));
    s.manual_launch_grid = num("manual_launch_grid") != 0;
    s.vector_width = int(num("vector_width"));
    s.shared_tiles = num("shared_tiles") != 0;
    if (auto b = maybe("reduce_in_block")) s.reduce_in_block = *b != 0;
    if (auto w = maybe("reduce_in_warp")) s.reduce_in_warp = *w != 0;
    if (auto o = maybe("online_softmax")) s.online_softmax = *o != 0;
    if (auto t = v.count("tensor_cores") ? maybe("tensor_cores") : std::nullopt) {
        if (*t < 0 || *t > int(TensorCores::TF32)) return std::nullopt;
        s.tensor_cores = TensorCores(*t);
    }
    try {
        r.ms = std::stod(v["ms"]);
        r.default_ms = std::stod(v["default_ms"]);
    } catch (...) {
        return std::nullopt;
    }
    if (!ok) return std::nullopt;
    return r;
}

std::vector<std::int64_t> shape_class(const Shape& extent) {
    std::vector<std::int64_t> c;
    for (std::int64_t n : extent) {
        std::int64_t p = 1;
        while (p < n) p *= 2;
        c.push_back(p);
    }
    return c;
}

std::string tuning_key(const std::string& device_name, int compute_capability,
                       const std::string& kernel_name, const std::string& source,
                       const Schedule& requested, const std::vector<std::int64_t>& shape_class) {
    // Length-prefixed parts, so that no two different inputs hash the same bytes.
    std::string bytes;
    for (const std::string& part :
         {std::string(kHeader), device_name, std::to_string(compute_capability), kernel_name,
          source, requested.describe(), fmt::format("{}", fmt::join(shape_class, ","))})
        bytes += std::to_string(part.size()) + ":" + part;
    return sha256_hex(bytes);
}

} // namespace loom
