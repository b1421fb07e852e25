#include "lib/common/ids.h"

#include <random>

#include "lib/common/hash.h"

namespace weir {

Id16 Id16::Generate() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  Id16 id;
  uint64_t a = gen(), b = gen();
  for (int i = 0; i < 8; ++i) {
    id.bytes_[i] = static_cast<uint8_t>(a >> (8 * i));
    id.bytes_[8 + i] = static_cast<uint8_t>(b >> (8 * i));
  }
  return id;
}

static int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<Id16> Id16::Parse(std::string_view text) {
  if (text.size() != 32) {
    return Status::InvalidArgument("cannot parse id '" + std::string(text) +
                                   "': expected 32 hex characters, got " +
                                   std::to_string(text.size()));
  }
  Id16 id;
  for (int i = 0; i < 16; ++i) {
    int hi = HexValue(text[2 * i]), lo = HexValue(text[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return Status::InvalidArgument("cannot parse id '" + std::string(text) +
                                     "': not a hex string");
    }
    id.bytes_[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return id;
}

Id16 Id16::FromHash(std::string_view text) {
  Id16 id;
  uint64_t a = Fnv1a64(text.data(), text.size());
  uint64_t b = Fnv1a64(text.data(), text.size(), a ^ 0x9e3779b97f4a7c15ULL);
  for (int i = 0; i < 8; ++i) {
    id.bytes_[i] = static_cast<uint8_t>(a >> (8 * i));
    id.bytes_[8 + i] = static_cast<uint8_t>(b >> (8 * i));
  }
  return id;
}

std::string Id16::ToHex() const {
  static const char* kDigits = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[2 * i] = kDigits[bytes_[i] >> 4];
    out[2 * i + 1] = kDigits[bytes_[i] & 15];
  }
  return out;
}

bool Id16::IsZero() const {
  for (auto b : bytes_) {
    if (b != 0) return false;
  }
  return true;
}

}  // namespace weir
