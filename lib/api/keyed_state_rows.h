#pragma once
// Canonical rows of keyed state (see state_snapshot.h): the byte form in which every
// keyed state backend writes full snapshots and canonical savepoints, and reads them
// back, whatever backend wrote them.
//
//   row       = [varint key length][key][varint value length][value]
//   row key   = [varint length][serialized key]                      value, list,
//               [varint length][serialized key][serialized user key]  map state
//   row value = the serialized value (value, reducing, aggregating, map state),
//               [varint length][serialized element]...               (list state)

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lib/api/serialization.h"

namespace weir {

inline void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// How many bytes AppendVarint writes for v.
inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

inline void AppendRow(std::string* out, std::string_view key, std::string_view value) {
  AppendVarint(out, key.size());
  out->append(key);
  AppendVarint(out, value.size());
  out->append(value);
}

// Calls f(key, value) for every row of [begin, end). Throws DeserializationError on a
// malformed row.
template <class F>
void ForEachRow(const uint8_t* begin, const uint8_t* end, F&& f) {
  DataInput in(begin, end);
  while (!in.AtEnd()) {
    uint64_t klen = in.ReadVarint();
    if (klen > in.remaining()) throw DeserializationError("row key beyond the data");
    std::string_view key(reinterpret_cast<const char*>(in.position()), klen);
    in.Skip(klen);
    uint64_t vlen = in.ReadVarint();
    if (vlen > in.remaining()) throw DeserializationError("row value beyond the data");
    std::string_view value(reinterpret_cast<const char*>(in.position()), vlen);
    in.Skip(vlen);
    f(key, value);
  }
}

// Splits a map row key into its serialized key and user key.
inline void SplitMapRowKey(std::string_view row_key, std::string_view* key, std::string_view* user_key) {
  DataInput in(reinterpret_cast<const uint8_t*>(row_key.data()),
               reinterpret_cast<const uint8_t*>(row_key.data()) + row_key.size());
  uint64_t klen = in.ReadVarint();
  if (klen > in.remaining()) throw DeserializationError("map row key beyond the data");
  const char* k = reinterpret_cast<const char*>(in.position());
  *key = std::string_view(k, klen);
  *user_key = std::string_view(k + klen, in.remaining() - klen);
}

// The row key of a serialized key: [varint length][key].
inline void AppendRowKey(std::string* out, std::string_view key) {
  AppendVarint(out, key.size());
  out->append(key);
}

// Calls f(element) for each element of a list row value.
template <class F>
void ForEachListElement(std::string_view list, F&& f) {
  DataInput in(reinterpret_cast<const uint8_t*>(list.data()),
               reinterpret_cast<const uint8_t*>(list.data()) + list.size());
  while (!in.AtEnd()) {
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) throw DeserializationError("list element beyond the data");
    f(std::string_view(reinterpret_cast<const char*>(in.position()), n));
    in.Skip(n);
  }
}

}  // namespace weir
