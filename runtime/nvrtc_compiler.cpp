#include "runtime/nvrtc_compiler.hpp"

#include "runtime/driver.hpp"
#include "runtime/embedded_templates.hpp"
#include "runtime/env.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

namespace loom {

std::vector<std::string> NvrtcOptions::all() const {
    std::vector<std::string> o = {fmt::format("--gpu-architecture=sm_{}", arch), "-std=c++17",
                                  "-default-device", "-lineinfo"};
    if (fast_math) o.push_back("--use_fast_math");
    if (report_resources) o.push_back("-Xptxas=-v");
    o.insert(o.end(), extra.begin(), extra.end());
    return o;
}

std::vector<std::pair<std::string, std::string>> NvrtcOptions::all_headers() const {
    std::vector<std::pair<std::string, std::string>> h = headers;
    if (!with_templates) return h;
    for (auto& t : loom::embedded_templates()) {
        bool shadowed = false;
        for (auto& u : headers) shadowed = shadowed || u.first == t.first;
        if (!shadowed) h.push_back(t);
    }
    return h;
}

std::string nvrtc_version() {
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return fmt::format("{}.{}", major, minor);
}

std::string numbered_source(const std::string& source) {
    std::istringstream in(source);
    std::string line, out;
    int n = 0;
    while (std::getline(in, line)) out += fmt::format("{:>4} | {}\n", ++n, line);
    return out;
}

namespace {

void check(nvrtcResult r, const char* call) {
    if (r != NVRTC_SUCCESS)
        throw InternalError(fmt::format("{} failed: {}", call, nvrtcGetErrorString(r)));
}

/// RAII for an nvrtcProgram.
struct Program {
    nvrtcProgram p = nullptr;
    ~Program() {
        if (p) nvrtcDestroyProgram(&p);
    }
};

std::string dump_source(const std::string& source, const std::string& name) {
    if (!env::flag("LOOM_DUMP_SOURCE_ON_ERROR")) return "";
    std::string path = fmt::format("/tmp/loom_{}_{:016x}.cu", name, std::hash<std::string>{}(source));
    std::ofstream(path) << source;
    return path;
}

} // namespace

NvrtcResult nvrtc_compile(const std::string& source, const std::string& name, const NvrtcOptions& options) {
    std::vector<std::pair<std::string, std::string>> headers = options.all_headers();
    std::vector<const char*> header_src, header_names;
    for (auto& [n, text] : headers) {
        header_names.push_back(n.c_str());
        header_src.push_back(text.c_str());
    }
    Program prog;
    check(nvrtcCreateProgram(&prog.p, source.c_str(), (name + ".cu").c_str(), int(header_src.size()),
                             header_src.data(), header_names.data()),
          "nvrtcCreateProgram");
    std::vector<std::string> opts = options.all();
    std::vector<const char*> argv;
    for (auto& o : opts) argv.push_back(o.c_str());
    nvrtcResult result = nvrtcCompileProgram(prog.p, int(argv.size()), argv.data());

    NvrtcResult out;
    std::size_t log_size = 0;
    check(nvrtcGetProgramLogSize(prog.p, &log_size), "nvrtcGetProgramLogSize");
    out.log.resize(log_size);
    if (log_size) check(nvrtcGetProgramLog(prog.p, out.log.data()), "nvrtcGetProgramLog");
    while (!out.log.empty() && (out.log.back() == '\0' || out.log.back() == '\n')) out.log.pop_back();

    if (result != NVRTC_SUCCESS) {
        std::string joined = fmt::format("{}", fmt::join(opts, " "));
        std::string path = dump_source(source, name);
        std::string where = path.empty() ? "set LOOM_DUMP_SOURCE_ON_ERROR=1 to write the source to a file"
                                         : "the source was written to " + path;
        throw CompileError(fmt::format("NVRTC could not compile kernel '{}' ({}).\n"
                                       "options: {}\n"
                                       "log:\n{}\n"
                                       "source ({}):\n{}",
                                       name, nvrtcGetErrorString(result), joined, out.log, where,
                                       numbered_source(source)),
                           out.log, joined, numbered_source(source));
    }
    std::size_t size = 0;
    check(nvrtcGetCUBINSize(prog.p, &size), "nvrtcGetCUBINSize");
    out.cubin.resize(size);
    check(nvrtcGetCUBIN(prog.p, out.cubin.data()), "nvrtcGetCUBIN");
    return out;
}

} // namespace loom
