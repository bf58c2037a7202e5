#include "compiler/codegen/c_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace loom::ir {

namespace {
const std::set<std::string>& reserved_names() {
    static const std::set<std::string> r = {
        "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double",
        "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
        "void", "volatile", "while", "class", "namespace", "template", "this", "new", "delete",
        "true", "false", "nullptr", "operator", "using", "typename", "threadIdx", "blockIdx",
        "blockDim", "gridDim", "warpSize", "min", "max", "abs", "labs", "llabs", "sqrt", "sqrtf", "rsqrt",
        "rsqrtf", "exp", "expf", "log", "logf", "pow", "powf", "sin", "sinf", "cos", "cosf",
        "tan", "tanf", "tanh", "tanhf", "erf", "erff", "fabs", "fabsf", "floor", "floorf", "ceil",
        "ceilf", "fma", "fmaf", "fmin", "fminf", "fmax", "fmaxf", "fmod", "fmodf", "restrict",
        // C++ keywords and the names the C++ prelude declares (both targets are C++).
        "private", "protected", "public", "virtual", "friend", "mutable", "explicit", "export",
        "register", "asm", "throw", "try", "catch", "typeid", "constexpr", "decltype",
        "noexcept", "alignas", "alignof", "static_assert", "thread_local", "static_cast",
        "const_cast", "dynamic_cast", "reinterpret_cast", "wchar_t", "char16_t", "char32_t",
        "and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq", "xor_eq",
        "not_eq", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
        "uint64_t", "size_t", "labs", "loom_min", "loom_max", "loom_shared"};
    return r;
}

/// Capitals, digits and underscores only, with at least one capital (the style of macros).
bool is_upper_name(std::string_view name) {
    return std::none_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; }) &&
           std::any_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

/// A name that <math.h>, <stdint.h>, <stdlib.h>, the host compiler or NVRTC may define as a
/// macro: printed as is, it would be replaced by the preprocessor (NAN, NULL, M_PI, INT32_MAX).
/// Besides the names the headers define (glibc's and the C standard's), every all-capital name
/// with an underscore, every M_ (math constant) and every _X (reserved) name is treated as one.
bool is_macro_name(const std::string& name) {
    static const std::set<std::string> macros = {
        "NULL", "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "SNAN", "SNANF",
        "SNANL", "MAXFLOAT", "EOF", "EDOM", "ERANGE", "EILSEQ", "NFDBITS", "BYTE_ORDER",
        "WNOHANG", "WUNTRACED", "WSTOPPED", "WEXITED", "WCONTINUED", "WNOWAIT", "WEXITSTATUS",
        "WTERMSIG", "WSTOPSIG", "WIFEXITED", "WIFSIGNALED", "WIFSTOPPED", "WIFCONTINUED",
        "errno", "assert", "offsetof", "alloca", "math_errhandling", "issubnormal", "isnan",
        "isinf", "isfinite", "isnormal", "signbit", "fpclassify", "unix", "linux", "i386",
        "be16toh", "be32toh", "be64toh", "htobe16", "htobe32", "htobe64", "htole16", "htole32",
        "htole64", "le16toh", "le32toh", "le64toh", "CUDART_VERSION", "CUDA_VERSION"};
    if (macros.count(name)) return true;
    if (name.size() >= 2 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z') return true;
    if (name.rfind("M_", 0) == 0) return true; // M_PI, M_PIf, M_SQRT1_2l, ...
    // INT32_MAX, UINT8_C, RAND_MAX, EXIT_SUCCESS, FP_NAN, HUGE_VAL_F32, ...
    return name.find('_') != std::string::npos && is_upper_name(name);
}
} // namespace

std::string CNames::unique(const std::string& hint) {
    std::string base = hint.empty() ? "t" : hint;
    if (reserved_names().count(base) || is_macro_name(base) || base.rfind("__", 0) == 0) base += "_";
    std::string name = base;
    // Names are never freed, so the search goes on where the last one for this base ended
    // (from 1 each time, thousands of CSE temporaries of one name were quadratic).
    for (int& i = next_suffix_[base]; used_.count(name);) name = fmt::format("{}_{}", base, ++i);
    used_.insert(name);
    return name;
}

std::string CNames::name_of(const void* key, const std::string& hint) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    order_.push_back(key);
    return names_[key] = unique(hint);
}

void CNames::release(std::size_t mark) {
    for (std::size_t i = mark; i < order_.size(); ++i) {
        auto it = names_.find(order_[i]);
        used_.erase(it->second);
        names_.erase(it);
    }
    order_.resize(mark);
}

std::string CNames::find(const void* key) const {
    auto it = names_.find(key);
    return it == names_.end() ? std::string() : it->second;
}

} // namespace loom::ir
