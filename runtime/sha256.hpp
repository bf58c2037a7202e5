// SHA-256 (FIPS 180-4), for cache keys and the integrity check of disk-cache entries. Our own
// implementation: the runtime links nothing but fmt (NVRTC is dlopen'ed).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loom {

/// Streaming SHA-256: update() any number of times, then digest() once.
class Sha256 {
public:
    using Digest = std::array<std::uint8_t, 32>;

    Sha256();
    Sha256& update(const void* data, std::size_t size);
    Sha256& update(std::string_view bytes) { return update(bytes.data(), bytes.size()); }
    /// Pads and returns the digest. The object is spent afterwards; reset() starts anew.
    Digest digest();
    /// digest() as 64 lowercase hex digits.
    std::string hex_digest();
    void reset();

private:
    void compress(const std::uint8_t* block);

    std::array<std::uint32_t, 8> state_;
    std::array<std::uint8_t, 64> buffer_;
    std::size_t buffered_ = 0;
    std::uint64_t total_bytes_ = 0;
};

/// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// Lowercase hex of a digest.
std::string to_hex(const Sha256::Digest& digest);

} // namespace loom
