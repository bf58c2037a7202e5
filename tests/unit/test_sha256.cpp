// SHA-256 against the FIPS 180-4 / NIST example vectors, and streaming against one-shot hashing
// across the 55/56/64-byte padding boundaries.
#include "runtime/sha256.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace loom {
namespace {

TEST(Sha256, EmptyString) {
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
    EXPECT_EQ(sha256_hex("abc"),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlockMessage448Bits) {
    EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, Message896Bits) {
    EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                         "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, OneMillionA) {
    const char* expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
    EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), expected);

    // The same message streamed in uneven pieces.
    Sha256 h;
    std::string chunk(997, 'a');
    std::size_t left = 1000000;
    for (std::size_t piece = 1; left > 0; piece = piece % 997 + 13) {
        std::size_t n = std::min({piece, left, chunk.size()});
        h.update(chunk.data(), n);
        left -= n;
    }
    EXPECT_EQ(h.hex_digest(), expected);
}

TEST(Sha256, PaddingBoundaries) {
    // Lengths where the padding does or does not spill into an extra block.
    const std::pair<std::size_t, const char*> cases[] = {
        {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
        {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
        {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
        {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
        {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
        {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"},
    };
    for (auto& [n, expected] : cases) {
        EXPECT_EQ(sha256_hex(std::string(n, 'a')), expected) << n << " bytes, one shot";
        Sha256 h;
        for (std::size_t i = 0; i < n; ++i) h.update("a");
        EXPECT_EQ(h.hex_digest(), expected) << n << " bytes, one byte at a time";
    }
}

TEST(Sha256, BinaryBytesAndReset) {
    std::string bytes;
    for (int i = 0; i < 256; ++i) bytes.push_back(char(i));
    const char* expected = "40aff2e9d2d8922e47afd4648e6967497158785fbd1da870e7110266bf944880";
    EXPECT_EQ(sha256_hex(bytes), expected);

    Sha256 h;
    h.update("something else");
    h.reset();
    h.update(bytes.substr(0, 100)).update(bytes.substr(100));
    Sha256::Digest d = h.digest();
    EXPECT_EQ(to_hex(d), expected);
    EXPECT_EQ(d[0], 0x40);
}

} // namespace
} // namespace loom
