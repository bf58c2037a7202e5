#include <loom/schedule.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

namespace loom {

namespace {
/// The fields as "name = value", each with "(chosen)" where `requested` (if given) differs.
std::string describe_fields(const Schedule& s, const Schedule* requested) {
    std::vector<std::string> parts;
    auto add = [&](const char* name, const std::string& value, bool differs) {
        parts.push_back(fmt::format("{} = {}{}", name, value,
                                    requested && differs ? " (chosen)" : ""));
    };
    const Schedule& r = requested ? *requested : s;
    add("block", s.block ? fmt::format("({})", fmt::join(*s.block, ", ")) : "choose",
        s.block != r.block);
    add("cells_per_thread", s.cells_per_thread ? std::to_string(s.cells_per_thread) : "choose",
        s.cells_per_thread != r.cells_per_thread);
    add("cells_axis", s.cells_axis ? std::to_string(*s.cells_axis) : "choose",
        s.cells_axis != r.cells_axis);
    add("stream_cells", s.stream_cells ? (*s.stream_cells ? "true" : "false") : "choose",
        s.stream_cells != r.stream_cells);
    add("shared_memory_budget",
        s.shared_memory_budget ? std::to_string(*s.shared_memory_budget) : "choose",
        s.shared_memory_budget != r.shared_memory_budget);
    add("max_registers",
        s.max_registers ? std::to_string(s.max_registers) : "0 (the compiler's choice)",
        s.max_registers != r.max_registers);
    add("manual_launch_grid", s.manual_launch_grid ? "true" : "false",
        s.manual_launch_grid != r.manual_launch_grid);
    add("vector_width", s.vector_width ? std::to_string(s.vector_width) : "choose",
        s.vector_width != r.vector_width);
    add("shared_tiles", s.shared_tiles ? "true" : "false", s.shared_tiles != r.shared_tiles);
    add("reduce_in_block", s.reduce_in_block ? (*s.reduce_in_block ? "true" : "false") : "choose",
        s.reduce_in_block != r.reduce_in_block);
    add("reduce_in_warp", s.reduce_in_warp ? (*s.reduce_in_warp ? "true" : "false") : "choose",
        s.reduce_in_warp != r.reduce_in_warp);
    add("online_softmax", s.online_softmax ? (*s.online_softmax ? "true" : "false") : "choose",
        s.online_softmax != r.online_softmax);
    if (s.tensor_cores || r.tensor_cores) {
        const TensorCores t = s.tensor_cores.value_or(TensorCores::Off);
        add("tensor_cores",
            to_string(t),
            s.tensor_cores != r.tensor_cores);
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}
} // namespace

const char* to_string(TensorCores t) {
    switch (t) {
    case TensorCores::Off: return "Off";
    case TensorCores::Float16: return "Float16";
    case TensorCores::BFloat16: return "BFloat16";
    case TensorCores::TF32: return "TF32";
    }
    return "TensorCores(?)";
}

std::string Schedule::describe() const { return describe_fields(*this, nullptr); }

std::string Schedule::describe(const Schedule& requested) const {
    return describe_fields(*this, &requested);
}

} // namespace loom
