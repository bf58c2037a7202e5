// Optional pretty-printing of generated source through clang-format's library. The core never
// needs Clang; without it, asking for formatted source is a clear error.
#include <loom/errors.hpp>
#include <loom/kernel.hpp>

#ifdef LOOM_WITH_CLANG
#include <clang/Format/Format.h>
#include <clang/Tooling/Core/Replacement.h>
#endif

namespace loom {

bool source_formatting_available() {
#ifdef LOOM_WITH_CLANG
    return true;
#else
    return false;
#endif
}

std::string format_source(const std::string& source) {
#ifdef LOOM_WITH_CLANG
    // The same style as the repository's .clang-format.
    clang::format::FormatStyle style = clang::format::getLLVMStyle();
    style.IndentWidth = 4;
    style.ColumnLimit = 100;
    style.AccessModifierOffset = -4;
    style.PointerAlignment = clang::format::FormatStyle::PAS_Left;
    style.DerivePointerAlignment = false;
    clang::tooling::Range all(0, static_cast<unsigned>(source.size()));
    clang::tooling::Replacements r = clang::format::reformat(style, source, {all}, "kernel.cu");
    auto formatted = clang::tooling::applyAllReplacements(source, r);
    if (!formatted) {
        std::string why = llvm::toString(formatted.takeError());
        throw InternalError("clang-format could not apply its replacements: " + why);
    }
    return *formatted;
#else
    (void)source;
    throw UserError("source({.formatted = true}) needs loom built with Clang, and this build has "
                    "none. Install libclang-14-dev and configure with -DLOOM_WITH_CLANG=ON (or "
                    "AUTO), or call source() without formatting");
#endif
}

} // namespace loom
