#pragma once
// 16-byte identifiers printed as 32 lower-case hex characters, as Flink's JobID,
// JobVertexID and trigger ids.

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "lib/common/status.h"

namespace weir {

class Id16 {
 public:
  Id16() { bytes_.fill(0); }
  // A random id (from a per-thread generator seeded from std::random_device).
  static Id16 Generate();
  // Parses exactly 32 hex characters (either case). Error names the text.
  static Result<Id16> Parse(std::string_view text);
  // Deterministic id from a string (e.g. a vertex id from an operator uid).
  static Id16 FromHash(std::string_view text);
  std::string ToHex() const;
  bool IsZero() const;
  const std::array<uint8_t, 16>& bytes() const { return bytes_; }
  auto operator<=>(const Id16&) const = default;

 private:
  std::array<uint8_t, 16> bytes_;
};

using JobId = Id16;
using TriggerId = Id16;
using VertexId = Id16;

}  // namespace weir

template <>
struct std::hash<weir::Id16> {
  size_t operator()(const weir::Id16& id) const noexcept {
    size_t h = 0;
    for (auto b : id.bytes()) h = h * 131 + b;
    return h;
  }
};
