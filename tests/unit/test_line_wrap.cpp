// wrap_long_lines, the printer's last step: lines over 100 columns break at the loosest operator
// or comma that fits, and nothing but white space (and a wrapped comment's `//`) changes.
#include "compiler/codegen/c_printer.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <sstream>
#include <string>

namespace loom::ir {
namespace {

std::string without_space(const std::string& s) {
    std::string out;
    for (char c : s)
        if (!std::isspace(static_cast<unsigned char>(c))) out += c;
    return out;
}

std::size_t longest_line(const std::string& s) {
    std::istringstream in(s);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) n = std::max(n, line.size());
    return n;
}

/// `count` terms "cK * a[i + K]" joined by " + ".
std::string sum(int count) {
    std::string s;
    for (int k = 0; k < count; ++k)
        s += (k ? " + c" : "c") + std::to_string(k) + " * a[i + " + std::to_string(k) + "]";
    return s;
}

TEST(LineWrap, ShortLinesAndTheTrailingNewlineStayAsTheyAre) {
    EXPECT_EQ(wrap_long_lines("int x = 1;\n    y = 2;\n"), "int x = 1;\n    y = 2;\n");
    EXPECT_EQ(wrap_long_lines("int x = 1;"), "int x = 1;");
    EXPECT_EQ(wrap_long_lines(""), "");
}

TEST(LineWrap, BreaksAtTheLoosestOperatorWithAContinuationIndent) {
    const std::string line = "        y[i] = " + sum(12) + ";\n";
    ASSERT_GT(line.size(), 200u);
    const std::string wrapped = wrap_long_lines(line);
    EXPECT_LE(longest_line(wrapped), 100u) << wrapped;
    EXPECT_EQ(without_space(wrapped), without_space(line));
    // Every break follows a " +": never between a coefficient and its factor.
    std::istringstream in(wrapped);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first.rfind("        y[i] = c0 * a[i + 0] + ", 0), 0u) << wrapped;
    EXPECT_EQ(first.back(), '+') << wrapped;
    for (std::string next; std::getline(in, next);)
        EXPECT_EQ(next.rfind("                c", 0), 0u) << "8 columns deeper:\n" << wrapped;
    EXPECT_EQ(wrap_long_lines(wrapped), wrapped) << "wrapping is idempotent";
}

TEST(LineWrap, PrefersBreaksOutsideParenthesesAndBrackets) {
    const std::string line = "    const double t = f(" + sum(4) + ") * g(" + sum(4) + ");";
    const std::string wrapped = wrap_long_lines(line);
    EXPECT_EQ(wrapped, "    const double t = f(" + sum(4) + ") *\n            g(" + sum(4) + ");")
        << wrapped;
}

TEST(LineWrap, BreaksParameterListsAfterCommas) {
    std::string params = "    ";
    for (int k = 0; k < 8; ++k)
        params += "const float* __restrict__ in_" + std::to_string(k) + ", ";
    params += "float* __restrict__ out)";
    const std::string wrapped = wrap_long_lines(params);
    EXPECT_LE(longest_line(wrapped), 100u) << wrapped;
    EXPECT_EQ(without_space(wrapped), without_space(params));
    EXPECT_NE(wrapped.find("in_2,\n            const float*"), std::string::npos) << wrapped;
}

TEST(LineWrap, CommentsContinueAsComments) {
    const std::string line = "        // y[0] = " + sum(10);
    const std::string wrapped = wrap_long_lines(line);
    EXPECT_LE(longest_line(wrapped), 100u) << wrapped;
    std::istringstream in(wrapped);
    for (std::string next; std::getline(in, next);)
        EXPECT_EQ(next.rfind("        //", 0), 0u) << wrapped;
    EXPECT_NE(wrapped.find("\n        //     c"), std::string::npos) << wrapped;
}

TEST(LineWrap, TrailingCommentMovesAboveItsLine) {
    const std::string code = "x = " + sum(6) + ";";
    const std::string wrapped = wrap_long_lines("    " + code + " // why");
    EXPECT_EQ(wrapped.rfind("    // why\n    x = ", 0), 0u) << wrapped;
    EXPECT_LE(longest_line(wrapped), 100u) << wrapped;
}

TEST(LineWrap, LeavesPreprocessorLinesAndStringsAlone) {
    const std::string pragma = "    #pragma omp parallel for " + std::string(100, 'x');
    EXPECT_EQ(wrap_long_lines(pragma), pragma);
    // No break inside the string literal, though it holds " + ".
    const std::string text = "s = \"" + sum(5) + "\" + t + u;";
    const std::string wrapped = wrap_long_lines(text, 40);
    EXPECT_NE(wrapped.find("\"" + sum(5) + "\""), std::string::npos) << wrapped;
}

TEST(LineWrap, AnUnbreakableLineStaysLong) {
    const std::string line = "    " + std::string(120, 'a') + ";";
    EXPECT_EQ(wrap_long_lines(line), line);
}

} // namespace
} // namespace loom::ir
