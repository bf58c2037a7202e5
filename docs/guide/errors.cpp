// Guide, "Errors": what loom throws and how to catch it. An in-place stencil is refused by
// create_kernel, an array of the wrong type by the call; both are UserErrors whose messages say
// what is wrong and how to fix it. The program checks that each error comes, of the right
// class, and prints its message.
#include <loom/loom.hpp>

#include <cstdio>
#include <iostream>
#include <string>

int main() {
    using namespace loom;
    int failures = 0;

    // [guide:user_error]
    auto f = field("f: float64[2D]");
    try {
        // Reads f's neighbours while writing f: on a GPU the cells would race.
        create_kernel(Assignment(f.center(), 0.5 * (f[{1, 0}] + f[{-1, 0}])), {.name = "smooth"});
    } catch (const UserError& e) {
        std::cerr << e.what() << "\n";
    }
    // [/guide:user_error]
    try {
        create_kernel(Assignment(f.center(), 0.5 * (f[{1, 0}] + f[{-1, 0}])), {.name = "smooth"});
        std::fprintf(stderr, "errors: the in-place stencil was accepted\n");
        ++failures;
    } catch (const UserError& e) {
        failures += std::string(e.what()).find("in-place stencil") == std::string::npos;
    }

    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Kernel kernel = create_kernel(Assignment(dst.center(), 2 * src.center()),
                                  {.target = Target::CPU, .name = "scale"});
    auto a = HostArray<double>::zeros({64, 64}); // float64, but the fields are float32
    auto b = HostArray<float>::zeros({64, 64});
    // [guide:catch]
    try {
        KernelFunction k = kernel.compile();
        k(args("src", a, "dst", b));
    } catch (const CompileError& e) { // the generated source did not compile (also log())
        std::cerr << "compile error: " << e.what() << "\n";
    } catch (const CudaError& e) {    // a driver call failed, or there is no driver
        std::cerr << "CUDA error " << e.error_name() << " in " << e.call() << ": " << e.what()
                  << "\n";
    } catch (const UserError& e) {    // bad input: the message says what to change
        std::cerr << e.what() << "\n";
    }
    // [/guide:catch]
    try {
        kernel.compile()(args("src", a, "dst", b));
        std::fprintf(stderr, "errors: the float64 array for a float32 field was accepted\n");
        ++failures;
    } catch (const UserError& e) {
        failures += std::string(e.what()).find("has element type float64") == std::string::npos;
    }

    // Every class derives from loom::Error, itself a std::runtime_error.
    try {
        field("f: float33[2D]");
        ++failures;
    } catch (const Error& e) {
        std::cerr << e.what() << "\n";
    }
    std::printf("errors: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
