#include <loom/field_info.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

namespace loom {

std::string_view layout_name(Layout l) {
    switch (l) {
    case Layout::C: return "c";
    case Layout::Fortran: return "fortran";
    case Layout::SoA: return "fzyx";
    case Layout::AoS: return "zyxf";
    }
    return "?";
}

std::optional<Layout> parse_layout_name(std::string_view n) {
    if (n == "c" || n == "C" || n == "numpy") return Layout::C;
    if (n == "f" || n == "F" || n == "fortran") return Layout::Fortran;
    if (n == "fzyx" || n == "soa" || n == "SoA") return Layout::SoA;
    if (n == "zyxf" || n == "aos" || n == "AoS") return Layout::AoS;
    return std::nullopt;
}

ScalarType FieldInfo::compute_type() const {
    return type == ScalarType::Float16 || type == ScalarType::BFloat16 ? half_compute_type : type;
}

int FieldInfo::num_components() const {
    int n = 1;
    for (int s : index_shape) n *= s;
    return n;
}

std::vector<int> FieldInfo::memory_order() const {
    std::vector<int> spatial, index;
    for (int d = 0; d < spatial_dims; ++d) spatial.push_back(d);
    for (int i = 0; i < index_dims(); ++i) index.push_back(spatial_dims + i);
    auto reversed = [](std::vector<int> v) { return std::vector<int>(v.rbegin(), v.rend()); };
    std::vector<int> order;
    auto append = [&](const std::vector<int>& v) { order.insert(order.end(), v.begin(), v.end()); };
    switch (layout) {
    case Layout::C: append(spatial); append(index); break;
    case Layout::Fortran: append(reversed(index)); append(reversed(spatial)); break;
    case Layout::SoA: append(index); append(reversed(spatial)); break;
    case Layout::AoS: append(reversed(spatial)); append(index); break;
    }
    return order;
}

std::vector<int> FieldInfo::spatial_axes_fastest_first() const {
    std::vector<int> out;
    auto order = memory_order();
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (*it < spatial_dims) out.push_back(*it);
    return out;
}

std::int64_t FieldInfo::fixed_elements() const {
    if (!is_fixed()) return 0;
    std::int64_t n = 1;
    auto times = [&n](std::int64_t e) {
        n = e != 0 && n > INT64_MAX / e ? INT64_MAX : n * e;
    };
    for (std::int64_t e : fixed_shape) times(e);
    for (int c : index_shape) times(c);
    return n;
}

std::vector<std::int64_t> FieldInfo::fixed_strides() const {
    std::vector<std::int64_t> shape(fixed_shape.begin(), fixed_shape.end());
    for (int s : index_shape) shape.push_back(s);
    std::vector<std::int64_t> strides(shape.size(), 0);
    std::int64_t running = 1;
    auto order = memory_order();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        strides[*it] = running;
        running *= shape[*it];
    }
    return strides;
}

std::string FieldInfo::describe() const {
    std::string s = name;
    if (!index_shape.empty()) s += fmt::format("({})", fmt::join(index_shape, ", "));
    s += fmt::format(": {}", type_name(type));
    if (is_fixed())
        s += fmt::format("[{}]", fmt::join(fixed_shape, ", "));
    else
        s += fmt::format("[{}D]", spatial_dims);
    if (layout != Layout::C) s += fmt::format(", layout {}", layout_name(layout));
    return s;
}

} // namespace loom
