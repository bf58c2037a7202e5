// Absolute reads (Field::at) and buffers: bad indices, scatter writes, gathers from a field the
// kernel writes, and buffers of the wrong shape at call time (on the CPU target, no GPU needed).
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <cstdlib>

namespace {
using namespace loom;
using namespace loom::counters;

TEST(BufferErrors, FloatIndexMustBeCast) {
    auto [img, out] = fields<2>("img, out: float32[2D]");
    Field lut = field("lut: float32[256]");
    LOOM_EXPECT_ERROR(lut.at({img.center() * 255}), UserError,
                      {"lut.at({img[0, 0] * 255.0f})", "index for axis 0 of field lut",
                       "has type float32", "absolute indices must be integers",
                       "cast<int>(img[0, 0] * 255.0f)"});
    Field grid = field("grid: float64[2D]");
    LOOM_EXPECT_ERROR(grid.at({x, 0.5}), UserError, {"axis 1 of field grid", "has type float64"});
    LOOM_EXPECT_ERROR(grid.at({x, x < 3}), UserError, {"axis 1 of field grid", "has type bool"});
}

TEST(BufferErrors, WrongNumberOfIndices) {
    Field grid = field("grid(3): float64[8, 8]");
    LOOM_EXPECT_ERROR(grid.at({x}), UserError,
                      {"grid.at({x})", "field grid has 2 spatial dimension(s)",
                       "but 1 index(es) were given", "one index per spatial axis",
                       "grid.at({i, j})"});
    Field w = field("w: float32[1D]");
    LOOM_EXPECT_ERROR(w.at({x, y, 0}), UserError,
                      {"field w has 1 spatial dimension(s)", "but 3 index(es) were given",
                       "w.at({i})"});
}

TEST(BufferErrors, UndefinedIndex) {
    Field w = field("w: float32[1D]");
    LOOM_EXPECT_ERROR(w.at({Expr()}), UserError,
                      {"w.at({<undefined>})", "index for axis 0 is an undefined expression"});
}

TEST(BufferErrors, ConstantIndexOutsideTheFixedShape) {
    Field lut = field("lut: float32[256]");
    LOOM_EXPECT_ERROR(lut.at({256}), UserError,
                      {"lut.at({256})", "index 256 on axis 0 lies outside field lut",
                       "size 256, valid 0..255"});
    Field t = field("t: float32[1D]");
    LOOM_EXPECT_ERROR(t.at({-1}), UserError, {"index -1 on axis 0 lies outside field t",
                                              "indices count from 0"});
}

TEST(BufferErrors, VectorBufferWithoutComponent) {
    Field grid = field("grid(3): float64[8, 8]");
    LOOM_EXPECT_ERROR(Expr(grid.at({x / 4, y / 4})) * 2.0, UserError,
                      {"grid.at({x / 4, y / 4}) accesses vector field grid", "index shape (3)",
                       "write grid.at({x / 4, y / 4})(i)", "grid.at({x / 4, y / 4}).vec()"});
    LOOM_EXPECT_ERROR(grid.at({1, 2})(0)(1), UserError,
                      {"components were already chosen (0)", "e.g. grid.at({1, 2})(1)"});
}

TEST(BufferErrors, AbsoluteWriteIsAScatter) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(Assignment(f.at({y, x}), 1.0), UserError,
                      {"cannot assign to `f.at(y, x)`", "scatter writes are not supported",
                       "f.center()", "read the inputs with .at()"});
    Field u = field("u(2): float64[2D]");
    Field v = field("v(2): float64[2D]");
    LOOM_EXPECT_ERROR(Assignment(u.at({0, 0}).vec(), v.vec()), UserError,
                      {"scatter writes are not supported"});
}

TEST(BufferErrors, AbsoluteReadOfAWrittenFieldIsARace) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), f.at({x, 0}) + 1.0), {.name = "smear"}),
                      UserError,
                      {"kernel 'smear'", "reads field f at absolute positions",
                       "assignment 1: `f[0, 0] = f.at(x, 0) + 1.0`", "and writes it",
                       "a race", "write into a second field"});
    // A relative read of the same field does not make the gather safe.
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), f.center() * f.at({0, y})), {.name = "scale_by_row"}),
        UserError, {"reads field f at absolute positions", "and writes it"});
}

TEST(BufferErrors, ABufferDoesNotAddAxesToTheKernel) {
    // The 1D kernel's counters stop at x, even though the buffer it reads is 2D.
    auto [in, out] = fields<2>("in, out: float32[1D]");
    Field w = field("w: float32[4, 4]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(out.center(), w.at({x % 4, y % 4}) * in.center()),
                                    {.name = "weights"}),
                      UserError, {"kernel 'weights'", "uses the counter y (axis 1)", "is 1D"});
}

// ---- call time (Target::CPU: runs without a GPU) ----------------------------------------------

bool host_compiler_available() { return std::system("command -v c++ >/dev/null 2>&1") == 0; }

KernelFunction tone_map_cpu() {
    auto [img, out] = fields<2>("img, out: float32[2D]");
    Field lut = field("lut: float32[256]");
    Field table = field("table: float32[1D]");
    KernelConfig cfg{.name = "tone_map"};
    cfg.target = Target::CPU;
    return create_kernel(Assignment(out.center(), lut.at({cast<int>(img.center() * 255)}) +
                                                      table.at({0})),
                         cfg)
        .compile();
}

TEST(BufferErrors, WrongBufferShapeAtCallTime) {
    if (!host_compiler_available()) GTEST_SKIP() << "no host compiler `c++` on PATH";
    KernelFunction k = tone_map_cpu();
    auto img = HostArray<float>::zeros({4, 5});
    auto out = HostArray<float>::zeros({4, 5});
    auto table = HostArray<float>::zeros({7});
    LOOM_EXPECT_ERROR(k(args("img", img, "out", out, "lut", HostArray<float>::zeros({100}),
                             "table", table)),
                      UserError,
                      {"kernel 'tone_map'", "argument 'lut'", "has spatial shape [100]",
                       "buffer lut was generated for the fixed shape [256]",
                       "pass an array of exactly that shape"});
    LOOM_EXPECT_ERROR(k(args("img", img, "out", out, "lut", HostArray<float>::zeros({256}),
                             "table", HostArray<float>::zeros({7, 2}))),
                      UserError,
                      {"argument 'table'", "has 2 dimension(s), but field table needs 1"});
    // The buffers' shapes differ from the iteration space's, and that is fine; the fields of
    // the iteration space must still agree.
    EXPECT_NO_THROW(k(args("img", img, "out", out, "lut", HostArray<float>::zeros({256}),
                           "table", table)));
    LOOM_EXPECT_ERROR(k(args("img", HostArray<float>::zeros({4, 6}), "out", out, "lut",
                             HostArray<float>::zeros({256}), "table", table)),
                      UserError,
                      {"fields share one iteration space", "'out' has spatial shape [4, 5]",
                       "'img' has [4, 6]"});
}

} // namespace
