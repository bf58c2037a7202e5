// Multi-stage kernels (loom::Stages) that the CPU and GPU tests share (tests/unit/test_stages.cpp,
// tests/gpu/test_stages_gpu.cpp). Each case builds its stages and computes its reference with
// hand-written loops in double: one stage after another over the whole iteration space, exactly
// as separate kernels would run. The inputs are fresh random values, including the ghost layers
// of the fields the stages write (a later stage reads them there); every output starts poisoned,
// and every element is checked: inside the iteration space against the reference, outside it
// still the value it had.
#pragma once

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace loom::test {

/// The values of one field, in C order over its shape (spatial axes, then a component axis).
struct StageField {
    std::string name;
    Shape shape;
    std::vector<double> values;
    double& at(std::int64_t x, std::int64_t y, std::int64_t z = 0, std::int64_t c = 0) {
        return values[std::size_t(index(x, y, z, c))];
    }
    double at(std::int64_t x, std::int64_t y, std::int64_t z = 0, std::int64_t c = 0) const {
        return values[std::size_t(index(x, y, z, c))];
    }
    std::int64_t index(std::int64_t x, std::int64_t y, std::int64_t z, std::int64_t c) const {
        std::int64_t i = x * shape[1] + y;
        if (shape.size() > 2 && spatial == 3) i = i * shape[2] + z;
        if (int(shape.size()) > spatial) i = i * shape.back() + c;
        return i;
    }
    int spatial = 2;
};

/// A case: the kernel's stages and config, its fields' starting values, and the reference.
struct StageCase {
    std::string name;
    Stages stages;
    KernelConfig config;
    std::vector<StageField> fields;                 ///< the starting values (inputs random,
                                                    ///< written fields random too)
    std::vector<std::string> outputs;               ///< the fields the stages write
    std::function<void(std::map<std::string, StageField>&)> reference; ///< in place, in double
    double tolerance = 1e-12;                       ///< relative, per element
    std::vector<std::pair<std::string, double>> scalars; ///< parameters and their values
};

inline StageField random_field(const std::string& name, Shape shape, int spatial, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    StageField f{name, shape, {}, spatial};
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    for (std::int64_t i = 0; i < n; ++i) f.values.push_back(d(rng));
    return f;
}

/// Rounds the values of a float32 field to float, as the kernel will see them.
inline void as_float(StageField& f) {
    for (double& v : f.values) v = double(float(v));
}

/// Two stages in 2D, float64: a Jacobi smoothing of u into t, then a stencil of t (and u) into
/// v with a scalar parameter. The stage boundary reaches one cell each way along both axes.
inline StageCase two_stage_2d(Shape shape, std::uint64_t seed) {
    auto [u, t, v] = fields<3>("u, t, v: float64[2D]");
    Expr c = param<double>("c");
    StageCase k;
    k.name = "two_stage_2d";
    k.stages = Stages({{Assignment(t.center(), 0.25 * (u[{1, 0}] + u[{-1, 0}] + u[{0, 1}] + u[{0, -1}]) - c * u.center())},
                       {Assignment(v.center(), t[{1, 0}] - t[{-1, 0}] + 2.0 * t[{0, 1}] - 0.5 * t[{0, -1}] + t.center() * u[{1, 0}])}});
    k.config.name = "two_stage_2d";
    k.scalars = {{"c", 0.3}};
    k.fields = {random_field("u", shape, 2, seed), random_field("t", shape, 2, seed + 1),
                random_field("v", shape, 2, seed + 2)};
    k.outputs = {"t", "v"};
    k.reference = [shape](std::map<std::string, StageField>& f) {
        const StageField& U = f.at("u");
        StageField& T = f.at("t");
        StageField& V = f.at("v");
        for (std::int64_t x = 1; x < shape[0] - 1; ++x)
            for (std::int64_t y = 1; y < shape[1] - 1; ++y)
                T.at(x, y) = 0.25 * (U.at(x + 1, y) + U.at(x - 1, y) + U.at(x, y + 1) + U.at(x, y - 1)) - 0.3 * U.at(x, y);
        for (std::int64_t x = 1; x < shape[0] - 1; ++x)
            for (std::int64_t y = 1; y < shape[1] - 1; ++y)
                V.at(x, y) = T.at(x + 1, y) - T.at(x - 1, y) + 2.0 * T.at(x, y + 1) - 0.5 * T.at(x, y - 1) +
                             T.at(x, y) * U.at(x + 1, y);
    };
    return k;
}

/// Three stages in 2D, float32, through a vector field: stage 2 reads both components of
/// stage 1's field at neighbouring cells, stage 3 reads stage 2 at neighbouring cells and stage 1
/// at the cell, so stage 1's halo is the sum of two reaches. Ghost layers of 2 and a temporary.
inline StageCase three_stages_with_a_vector(Shape shape, std::uint64_t seed) {
    auto [u, b, w] = fields<3>("u, b, w: float32[2D]");
    Field a = field("a(2): float32[2D]");
    StageCase k;
    k.name = "three_stages";
    AssignmentCollection first{Assignment(a(0), u[{1, 0}] * u[{0, 1}]),
                               Assignment(a(1), u[{-1, 0}] - u[{0, -1}])};
    AssignmentCollection second;
    Expr s = second.subexpression("s", a[{1, 0}](0) + a[{0, -1}](1));
    second.add(Assignment(b.center(), s * s - a[{-1, 1}](1)));
    AssignmentCollection third{Assignment(w.center(), b[{0, 1}] - b[{-1, 0}] + a(0) * b.center())};
    k.stages = Stages({first, second, third});
    k.config.name = "three_stages";
    k.config.ghost_layers = 2;
    k.tolerance = 1e-5;
    Shape vec = shape;
    vec.push_back(2);
    k.fields = {random_field("u", shape, 2, seed), random_field("a", vec, 2, seed + 1),
                random_field("b", shape, 2, seed + 2), random_field("w", shape, 2, seed + 3)};
    for (StageField& f : k.fields) as_float(f);
    k.outputs = {"a", "b", "w"};
    k.reference = [shape](std::map<std::string, StageField>& f) {
        const StageField& U = f.at("u");
        StageField& A = f.at("a");
        StageField& B = f.at("b");
        StageField& W = f.at("w");
        auto each = [&](const std::function<void(std::int64_t, std::int64_t)>& body) {
            for (std::int64_t x = 2; x < shape[0] - 2; ++x)
                for (std::int64_t y = 2; y < shape[1] - 2; ++y) body(x, y);
        };
        each([&](std::int64_t x, std::int64_t y) {
            A.at(x, y, 0, 0) = U.at(x + 1, y) * U.at(x, y + 1);
            A.at(x, y, 0, 1) = U.at(x - 1, y) - U.at(x, y - 1);
        });
        each([&](std::int64_t x, std::int64_t y) {
            const double s = A.at(x + 1, y, 0, 0) + A.at(x, y - 1, 0, 1);
            B.at(x, y) = s * s - A.at(x - 1, y + 1, 0, 1);
        });
        each([&](std::int64_t x, std::int64_t y) {
            W.at(x, y) = B.at(x, y + 1) - B.at(x - 1, y) + A.at(x, y, 0, 0) * B.at(x, y);
        });
    };
    return k;
}

/// Two stages in 3D, float64, over an iteration slice that leaves cells of the ghost region out
/// on some sides: stage 2 reads stage 1's field there from memory, as it was.
inline StageCase two_stages_3d_in_a_slice(Shape shape, std::uint64_t seed) {
    auto [u, t, v] = fields<3>("u, t, v: float64[3D]");
    StageCase k;
    k.name = "stages_3d_slice";
    k.stages = Stages({{Assignment(t.center(), u[{1, 0, 0}] + u[{0, -1, 0}] + u[{0, 0, 1}] - 3.0 * u.center())},
                       {Assignment(v.center(), t[{-1, 0, 0}] + t[{0, 1, 0}] + t[{0, 0, -1}] + t[{0, 0, 1}] - t.center())}});
    k.config.name = "stages_3d_slice";
    k.config.iteration_slice = Slice{range(2, -1), range(1, -2), range(1, -1)};
    k.fields = {random_field("u", shape, 3, seed), random_field("t", shape, 3, seed + 1),
                random_field("v", shape, 3, seed + 2)};
    k.outputs = {"t", "v"};
    k.reference = [shape](std::map<std::string, StageField>& f) {
        const StageField& U = f.at("u");
        StageField& T = f.at("t");
        StageField& V = f.at("v");
        auto each = [&](const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& body) {
            for (std::int64_t x = 2; x < shape[0] - 1; ++x)
                for (std::int64_t y = 1; y < shape[1] - 2; ++y)
                    for (std::int64_t z = 1; z < shape[2] - 1; ++z) body(x, y, z);
        };
        each([&](std::int64_t x, std::int64_t y, std::int64_t z) {
            T.at(x, y, z) = U.at(x + 1, y, z) + U.at(x, y - 1, z) + U.at(x, y, z + 1) - 3.0 * U.at(x, y, z);
        });
        each([&](std::int64_t x, std::int64_t y, std::int64_t z) {
            V.at(x, y, z) = T.at(x - 1, y, z) + T.at(x, y + 1, z) + T.at(x, y, z - 1) + T.at(x, y, z + 1) - T.at(x, y, z);
        });
    };
    return k;
}

/// Seed 003's conv3x3 -> ReLU -> conv3x3 in 2D, float64, the intermediate t on chip
/// (Stages::on_chip): never an argument, zero on the ghost cells (zero padding). Only u and v
/// are arrays.
inline StageCase conv_relu_conv_on_chip(Shape shape, std::uint64_t seed) {
    auto [u, t, v] = fields<3>("u, t, v: float64[2D]");
    static const double w1[3][3] = {{0.1, -0.2, 0.3}, {0.4, 0.5, -0.6}, {0.7, 0.8, 0.9}};
    static const double w2[3][3] = {{-0.3, 0.2, 0.1}, {0.6, -0.5, 0.4}, {0.9, 0.8, -0.7}};
    Expr c1, c2;
    for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b) {
            Expr x = w1[a + 1][b + 1] * u[{a, b}], y = w2[a + 1][b + 1] * t[{a, b}];
            c1 = c1.defined() ? c1 + x : x;
            c2 = c2.defined() ? c2 + y : y;
        }
    StageCase k;
    k.name = "conv_relu_conv";
    k.stages = Stages({{Assignment(t.center(), max(c1, 0.0))}, {Assignment(v.center(), c2)}});
    k.stages.on_chip(t);
    k.config.name = "conv_relu_conv";
    k.fields = {random_field("u", shape, 2, seed), random_field("v", shape, 2, seed + 1)};
    k.outputs = {"v"};
    k.reference = [shape](std::map<std::string, StageField>& f) {
        const StageField& U = f.at("u");
        StageField& V = f.at("v");
        StageField T{"t", shape, std::vector<double>(U.values.size(), 0.0), 2}; // zero padding
        for (std::int64_t x = 1; x < shape[0] - 1; ++x)
            for (std::int64_t y = 1; y < shape[1] - 1; ++y) {
                double s = 0;
                for (int a = -1; a <= 1; ++a)
                    for (int b = -1; b <= 1; ++b) s += w1[a + 1][b + 1] * U.at(x + a, y + b);
                T.at(x, y) = std::max(s, 0.0);
            }
        for (std::int64_t x = 1; x < shape[0] - 1; ++x)
            for (std::int64_t y = 1; y < shape[1] - 1; ++y) {
                double s = 0;
                for (int a = -1; a <= 1; ++a)
                    for (int b = -1; b <= 1; ++b) s += w2[a + 1][b + 1] * T.at(x + a, y + b);
                V.at(x, y) = s;
            }
    };
    return k;
}

/// Three stages in 3D, float64, over ghost layers of 2 along axis 0: t on chip holding the
/// field b's values outside the iteration space (b is read nowhere else), s on chip with -1.5
/// there, a temporary in stage 2; the last stage reads both at neighbouring cells.
inline StageCase on_chip_3d(Shape shape, std::uint64_t seed) {
    auto [u, b, t, s, v] = fields<5>("u, b, t, s, v: float64[3D]");
    StageCase k;
    k.name = "on_chip_3d";
    AssignmentCollection second;
    Expr q = second.subexpression("q", t[{1, 0, 0}] - t[{0, 0, -1}]);
    second.add(Assignment(s.center(), q * q + t[{-2, 0, 0}]));
    k.stages = Stages({{Assignment(t.center(), u[{2, 0, 0}] * u[{0, 1, 0}] - u[{0, 0, -1}])},
                       second,
                       {Assignment(v.center(), s[{0, -1, 0}] + s[{-1, 0, 0}] - 2.0 * t[{0, 0, 1}] * s.center())}});
    k.stages.on_chip(t, b).on_chip(s, -1.5);
    k.config.name = "on_chip_3d";
    k.config.ghost_layers = GhostLayers{{2, 2}, {1, 1}, {1, 1}};
    k.fields = {random_field("u", shape, 3, seed), random_field("b", shape, 3, seed + 1),
                random_field("v", shape, 3, seed + 2)};
    k.outputs = {"v"};
    k.reference = [shape](std::map<std::string, StageField>& f) {
        const StageField& U = f.at("u");
        StageField& V = f.at("v");
        StageField T = f.at("b"), S = f.at("b"); // outside the space: b's values, and -1.5
        for (double& x : S.values) x = -1.5;
        auto each = [&](const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& body) {
            for (std::int64_t x = 2; x < shape[0] - 2; ++x)
                for (std::int64_t y = 1; y < shape[1] - 1; ++y)
                    for (std::int64_t z = 1; z < shape[2] - 1; ++z) body(x, y, z);
        };
        each([&](std::int64_t x, std::int64_t y, std::int64_t z) {
            T.at(x, y, z) = U.at(x + 2, y, z) * U.at(x, y + 1, z) - U.at(x, y, z - 1);
        });
        each([&](std::int64_t x, std::int64_t y, std::int64_t z) {
            const double q = T.at(x + 1, y, z) - T.at(x, y, z - 1);
            S.at(x, y, z) = q * q + T.at(x - 2, y, z);
        });
        each([&](std::int64_t x, std::int64_t y, std::int64_t z) {
            V.at(x, y, z) = S.at(x, y - 1, z) + S.at(x - 1, y, z) - 2.0 * T.at(x, y, z + 1) * S.at(x, y, z);
        });
    };
    return k;
}

/// `steps` time steps of a 2D 5-point heat step src -> dst in one call (KernelConfig::time_steps),
/// float64, against the same number of separate sweeps that alternate between the pair: src
/// and dst start with different random values everywhere, ghost cells included, so a step that
/// read the wrong array's ghost cells shows. dst gets the last sweep's result; src stays.
inline StageCase heat_time_steps_2d(Shape shape, int steps, std::uint64_t seed) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Expr alpha = param<double>("alpha");
    StageCase k;
    k.name = "heat_steps";
    const Assignment step(dst.center(), src.center() + alpha * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] +
                                                                src[{0, -1}] - 4.0 * src.center()));
    k.stages = Stages(std::vector<AssignmentCollection>{AssignmentCollection{step}});
    k.config.name = "heat_steps";
    k.config.time_steps = steps;
    k.scalars = {{"alpha", 0.2}};
    k.fields = {random_field("src", shape, 2, seed), random_field("dst", shape, 2, seed + 1)};
    k.outputs = {"dst"};
    k.reference = [shape, steps](std::map<std::string, StageField>& f) {
        StageField a = f.at("src"), b = f.at("dst");
        for (int step = 1; step <= steps; ++step) {
            const StageField& in = step % 2 ? a : b;
            StageField& out = step % 2 ? b : a;
            for (std::int64_t x = 1; x < shape[0] - 1; ++x)
                for (std::int64_t y = 1; y < shape[1] - 1; ++y)
                    out.at(x, y) = in.at(x, y) + 0.2 * (in.at(x + 1, y) + in.at(x - 1, y) + in.at(x, y + 1) +
                                                        in.at(x, y - 1) - 4.0 * in.at(x, y));
        }
        const StageField& last = steps % 2 ? b : a;
        for (std::int64_t x = 1; x < shape[0] - 1; ++x)
            for (std::int64_t y = 1; y < shape[1] - 1; ++y) f.at("dst").at(x, y) = last.at(x, y);
    };
    return k;
}

/// Three time steps of two coupled fields in 3D, float32 (u' = u + c L(w) k, w' = w - c L(u)),
/// a coefficient field k of the same type read at the cell: the pairs named in ping_pong,
/// as loom cannot tell the state from the coefficient. A temporary per step.
inline StageCase coupled_time_steps_3d(Shape shape, std::uint64_t seed) {
    auto [u, w, kf, u2, w2] = fields<5>("u, w, k, u2, w2: float32[3D]");
    StageCase c;
    c.name = "coupled_steps";
    AssignmentCollection step;
    Expr lw = step.subexpression("lw", w[{1, 0, 0}] + w[{-1, 0, 0}] + w[{0, 1, 0}] + w[{0, -1, 0}] +
                                           w[{0, 0, 1}] + w[{0, 0, -1}] - 6.0f * w.center());
    step.add(Assignment(u2.center(), u.center() + 0.05f * lw * kf.center()));
    step.add(Assignment(w2.center(), w.center() - 0.05f * (u[{1, 0, 0}] - u[{0, 0, -1}])));
    c.stages = Stages(std::vector<AssignmentCollection>{step});
    c.config.name = "coupled_steps";
    c.config.time_steps = 3;
    c.config.ping_pong = {{"u", "u2"}, {"w", "w2"}};
    c.tolerance = 1e-5;
    c.fields = {random_field("u", shape, 3, seed), random_field("w", shape, 3, seed + 1),
                random_field("k", shape, 3, seed + 2), random_field("u2", shape, 3, seed + 3),
                random_field("w2", shape, 3, seed + 4)};
    for (StageField& f : c.fields) as_float(f);
    c.outputs = {"u2", "w2"};
    c.reference = [shape](std::map<std::string, StageField>& f) {
        StageField U[2] = {f.at("u"), f.at("u2")}, W[2] = {f.at("w"), f.at("w2")};
        const StageField& K = f.at("k");
        for (int step = 1; step <= 3; ++step) {
            const int in = step % 2 ? 0 : 1, out = 1 - in;
            for (std::int64_t x = 1; x < shape[0] - 1; ++x)
                for (std::int64_t y = 1; y < shape[1] - 1; ++y)
                    for (std::int64_t z = 1; z < shape[2] - 1; ++z) {
                        const StageField &u = U[in], &w = W[in];
                        const double lw = w.at(x + 1, y, z) + w.at(x - 1, y, z) + w.at(x, y + 1, z) +
                                          w.at(x, y - 1, z) + w.at(x, y, z + 1) + w.at(x, y, z - 1) -
                                          6.0 * w.at(x, y, z);
                        U[out].at(x, y, z) = u.at(x, y, z) + 0.05 * lw * K.at(x, y, z);
                        W[out].at(x, y, z) = w.at(x, y, z) - 0.05 * (u.at(x + 1, y, z) - u.at(x, y, z - 1));
                    }
        }
        f.at("u2") = U[1];
        f.at("w2") = W[1];
    };
    return c;
}

/// Every element of `got` against `want` (relative tolerance); names the first that differs.
inline ::testing::AssertionResult fields_match(const StageField& want, const std::vector<double>& got,
                                               double tolerance) {
    if (got.size() != want.values.size())
        return ::testing::AssertionFailure() << want.name << ": " << got.size() << " elements, expected " << want.values.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double w = want.values[i], g = got[i];
        if (!(std::fabs(g - w) <= tolerance * std::max(1.0, std::fabs(w))))
            return ::testing::AssertionFailure() << want.name << " element " << i << ": got " << g << ", expected " << w;
    }
    return ::testing::AssertionSuccess();
}

/// Runs `c` through `kernel` on arrays of type Array<T> (HostArray or DeviceArray) and checks
/// every element of every field against the reference.
template <template <class> class Array, class T>
void expect_stage_case(const StageCase& c, KernelFunction kernel) {
    std::map<std::string, StageField> want;
    for (const StageField& f : c.fields) want[f.name] = f;
    c.reference(want);
    std::vector<Array<T>> arrays;
    arrays.reserve(c.fields.size());
    Args a;
    for (const StageField& f : c.fields) {
        std::vector<T> v(f.values.begin(), f.values.end());
        arrays.push_back(Array<T>::from_host(v, f.shape));
    }
    for (std::size_t i = 0; i < c.fields.size(); ++i)
        a.named.emplace_back(c.fields[i].name, Arg(static_cast<ArrayRef>(arrays[i])));
    for (auto& [name, value] : c.scalars) a.named.emplace_back(name, Arg(value));
    kernel(a);
    kernel.synchronize();
    for (std::size_t i = 0; i < c.fields.size(); ++i) {
        std::vector<T> got = arrays[i].to_host();
        EXPECT_TRUE(fields_match(want.at(c.fields[i].name), std::vector<double>(got.begin(), got.end()), c.tolerance))
            << c.name;
    }
}

} // namespace loom::test
