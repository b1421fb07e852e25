#pragma once
// Binary serialization of record and state values.
//
// Serializer<T> has two static functions, Write(DataOutput&, const T&) and
// Read(DataInput&, T&). Built in: integers, floating point, bool, std::string, pairs,
// tuples, vectors, optionals, maps. A user struct becomes serializable by listing its
// fields:
//
//   struct Trade { std::string symbol; int64_t qty; double price;
//                  WEIR_FIELDS(symbol, qty, price) };
//
// The encoding is the canonical format of weir's records and state: little-endian
// fixed-width numbers, and unsigned LEB128 lengths for strings and containers. It is
// the same in every process and build, which checkpoints rely on.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace weir {

// memcpy for the short copies of serialization (words, small fields), inline: a call
// to memcpy with a size known only at run time costs more than the copy itself. Always
// inline, as AssignBytes and DirectWriter's writes: left to itself, GCC kept them out of
// line in some of word count's hot loops once they had more than one caller there.
// 4 to 16 bytes are copied as two words that may overlap, 1 to 3 as the first, middle
// and last byte: no loop, whose number of steps would change from word to word and
// mispredict.
[[gnu::always_inline]] inline void CopyBytes(uint8_t* to, const uint8_t* from, size_t n) {
  if (n >= 8) {
    if (n > 16) {
      std::memcpy(to, from, n);
      return;
    }
    uint64_t head, tail;  // may overlap: both are read before either is written
    std::memcpy(&head, from, 8);
    std::memcpy(&tail, from + n - 8, 8);
    std::memcpy(to, &head, 8);
    std::memcpy(to + n - 8, &tail, 8);
  } else if (n >= 4) {
    uint32_t head, tail;
    std::memcpy(&head, from, 4);
    std::memcpy(&tail, from + n - 4, 4);
    std::memcpy(to, &head, 4);
    std::memcpy(to + n - 4, &tail, 4);
  } else if (n != 0) {
    const uint8_t first = from[0], middle = from[n / 2], last = from[n - 1];
    to[0] = first;
    to[n / 2] = middle;
    to[n - 1] = last;
  }
}

// Whether p[0, n) and q[0, n) hold the same bytes, for sizeof(W) <= n <= 2 * sizeof(W):
// their first and their last sizeof(W) bytes, two loads each that may overlap.
template <class W>
[[gnu::always_inline]] inline bool SameEnds(const char* p, const char* q, size_t n) {
  W p0, p1, q0, q1;
  std::memcpy(&p0, p, sizeof(W));
  std::memcpy(&p1, p + n - sizeof(W), sizeof(W));
  std::memcpy(&q0, q, sizeof(W));
  std::memcpy(&q1, q + n - sizeof(W), sizeof(W));
  return ((p0 ^ q0) | (p1 ^ q1)) == 0;
}

// a == b for short byte strings (words, short keys), inline: std::string's == calls
// memcmp, which costs more than comparing a word. 1 to 16 bytes are compared as CopyBytes
// copies them.
[[gnu::always_inline]] inline bool SameBytes(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  if (n >= 8) return n > 16 ? std::memcmp(p, q, n) == 0 : SameEnds<uint64_t>(p, q, n);
  if (n >= 4) return SameEnds<uint32_t>(p, q, n);
  if (n == 0) return true;
  return ((p[0] ^ q[0]) | (p[n / 2] ^ q[n / 2]) | (p[n - 1] ^ q[n - 1])) == 0;
}

namespace string_internal {
// Copies `bytes` to `to`, which may lie at or before them (within one string): CopyBytes
// reads a short copy's bytes before writing them, or copies forward, and memmove takes
// any overlap.
[[gnu::always_inline]] inline void MoveBytes(char* to, std::string_view bytes) {
  if (bytes.size() <= 16) {
    CopyBytes(reinterpret_cast<uint8_t*>(to), reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  } else {
    std::memmove(to, bytes.data(), bytes.size());
  }
}

// Sets a string's length within its capacity without filling the new tail, what C++23's
// resize_and_overwrite does, in C++20 with libstdc++: growing a string with resize fills
// its tail and append copies into it, both calls into libstdc++ that cost more than
// copying a word (half of word count's words grow a reused string).
#if defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI && !defined(__cpp_lib_string_resize_and_overwrite)
#define WEIR_STRING_SET_LENGTH 1
// s's length becomes n (<= its capacity) and s[n] its terminator; the bytes before n stay
// as they are. This is libstdc++'s _M_set_length, which is private: an explicit
// instantiation may name it, and the friend it defines calls it.
void SetLength(std::string& s, size_t n);
template <void (std::string::*Set)(std::string::size_type)>
struct LengthSetter {
  friend void SetLength(std::string& s, size_t n) { (s.*Set)(n); }
};
template struct LengthSetter<&std::string::_M_set_length>;
#endif
}  // namespace string_internal

// Strings of up to 15 bytes, most words, copied and compared as 16 bytes: a copy or a
// compare that branches on the length, which changes from word to word, mispredicts. A
// libstdc++ string's buffer holds at least 16 bytes (its 15 in place, or more on the
// heap, and the terminator), so 16 bytes may be read from any string and written into
// any whose length is set after (WEIR_SHORT_STRINGS: where this holds).
#if defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI && \
    (defined(WEIR_STRING_SET_LENGTH) || defined(__cpp_lib_string_resize_and_overwrite))
#define WEIR_SHORT_STRINGS 1
#endif
inline constexpr size_t kShortString = 15;

// s = the n <= kShortString bytes at `from`, whose first 16 bytes may be read.
[[gnu::always_inline]] inline void AssignShort(std::string& s, const char* from, size_t n) {
#if defined(WEIR_SHORT_STRINGS) && defined(__cpp_lib_string_resize_and_overwrite)
  s.resize_and_overwrite(kShortString, [&](char* data, size_t) {
    std::memcpy(data, from, kShortString + 1);
    return n;
  });
#elif defined(WEIR_SHORT_STRINGS)
  std::memcpy(s.data(), from, kShortString + 1);
  string_internal::SetLength(s, n);
#else
  s.assign(from, n);
#endif
}

// Copies s's bytes to `to`, which has room for max(s.size(), 16) bytes: a short string
// as 16 bytes.
[[gnu::always_inline]] inline void CopyString(char* to, const std::string& s) {
#if defined(WEIR_SHORT_STRINGS)
  if (s.size() <= kShortString) [[likely]] {
    std::memcpy(to, s.data(), kShortString + 1);
    return;
  }
#endif
  std::memcpy(to, s.data(), s.size());
}

// Rewrites s as write(char* data) makes it: write may write data[0, max_size) and returns
// the new length (<= max_size). C++23's resize_and_overwrite: no bytes are filled or
// copied that write writes again.
template <class Write>
[[gnu::always_inline]] inline void OverwriteString(std::string& s, size_t max_size, Write&& write) {
#if defined(__cpp_lib_string_resize_and_overwrite)
  s.resize_and_overwrite(max_size, [&](char* data, size_t) { return write(data); });
#elif defined(WEIR_STRING_SET_LENGTH)
  if (s.capacity() < max_size) [[unlikely]] s.reserve(max_size);
  string_internal::SetLength(s, write(s.data()));
#else
  s.resize(max_size);
  s.resize(write(s.data()));
#endif
}

// a == b, for strings: those of up to kShortString bytes compared as 16 bytes, with the
// bytes past their length masked off.
[[gnu::always_inline]] inline bool SameString(const std::string& a, const std::string& b) {
#if defined(WEIR_SHORT_STRINGS)
  const size_t n = a.size();
  if (n != b.size()) return false;
  if (n <= kShortString) {
    uint64_t a0, a1, b0, b1;
    std::memcpy(&a0, a.data(), 8);
    std::memcpy(&a1, a.data() + 8, 8);
    std::memcpy(&b0, b.data(), 8);
    std::memcpy(&b1, b.data() + 8, 8);
    const unsigned __int128 diff = (static_cast<unsigned __int128>(a1 ^ b1) << 64) | (a0 ^ b0);
    const unsigned __int128 mask = (static_cast<unsigned __int128>(1) << (8 * n)) - 1;
    return (diff & mask) == 0;
  }
#endif
  return SameBytes(a, b);
}

// s = bytes (which may lie within s). Where s already has the room (a string read into
// again and again, a word in its short-string buffer), a short copy is inline and only
// the length is set: std::string::assign goes through the general _M_replace and a call
// to memcpy, which cost more than copying a word. For hot paths that refill one string.
[[gnu::always_inline]] inline void AssignBytes(std::string& s, std::string_view bytes) {
  const size_t n = bytes.size();
  if (n > s.capacity()) [[unlikely]] {
    s.assign(bytes);
    return;
  }
  // Within the capacity the buffer stays where it is, with room for n bytes and the
  // terminator.
#if defined(__cpp_lib_string_resize_and_overwrite)
  s.resize_and_overwrite(n, [&](char* data, size_t) {
    string_internal::MoveBytes(data, bytes);
    return n;
  });
#elif defined(WEIR_STRING_SET_LENGTH)
  // Past its length, up to its capacity, a libstdc++ string's buffer is its own to write.
  string_internal::MoveBytes(s.data(), bytes);
  string_internal::SetLength(s, n);
#else
  // Growing, the tail's bytes are appended first (resize would fill it, and then it is
  // copied); shrinking, only after the copy, which may have read the tail.
  if (const size_t size = s.size(); n > size) s.append(bytes.data() + size, n - size);
  string_internal::MoveBytes(s.data(), bytes);
  if (n < s.size()) s.erase(n);
#endif
}

// Writes to a byte vector it does not own, in one of two ways:
// - DataOutput(&buf) appends: buf's size is its content, each write grows it;
// - DataOutput(&buf, &used) writes in place: buf[0, used) is the content and the rest of
//   buf's size is room to write into without touching the vector (the fast path of the
//   channels, which keep their open buffers at full size); buf grows when the room runs
//   out, and `used` is advanced when this DataOutput goes away.
class DataOutput {
 public:
  explicit DataOutput(std::vector<uint8_t>* buf) : buf_(buf) {}
  // In place: needs *used <= buf->size().
  DataOutput(std::vector<uint8_t>* buf, size_t* used)
      : buf_(buf), used_(used), pos_(buf->data() + *used), end_(buf->data() + buf->size()) {}
  ~DataOutput() {
    if (used_) *used_ = static_cast<size_t>(pos_ - buf_->data());
  }
  DataOutput(const DataOutput&) = delete;
  DataOutput& operator=(const DataOutput&) = delete;

  void WriteBytes(const void* p, size_t n) {
    if (static_cast<size_t>(end_ - pos_) >= n) [[likely]] {
      CopyBytes(pos_, static_cast<const uint8_t*>(p), n);
      pos_ += n;
      return;
    }
    WriteSlow(p, n);
  }
  template <class T>
  void WriteFixed(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (static_cast<size_t>(end_ - pos_) >= sizeof(T)) [[likely]] {
      std::memcpy(pos_, &v, sizeof(T));
      pos_ += sizeof(T);
      return;
    }
    WriteSlow(&v, sizeof(T));
  }
  void WriteVarint(uint64_t v) {
    if (v < 0x80 && pos_ != end_) [[likely]] {
      *pos_++ = static_cast<uint8_t>(v);
      return;
    }
    WriteLongVarint(v);
  }
  // Room for exactly n bytes at the current position, which moves past them: the caller
  // writes all n there before the next write. Grows the room (or the vector) when short.
  uint8_t* Reserve(size_t n) {
    if (static_cast<size_t>(end_ - pos_) >= n) [[likely]] {
      uint8_t* at = pos_;
      pos_ += n;
      return at;
    }
    return ReserveSlow(n);
  }
  // The bytes written so far (appending: the whole vector).
  size_t size() const { return used_ ? static_cast<size_t>(pos_ - buf_->data()) : buf_->size(); }
  // The bytes written so far, to be patched in place: valid until the next write.
  uint8_t* data() { return buf_->data(); }
  // Drops the bytes written from `size` (at most size()) on.
  void Truncate(size_t size) {
    if (used_) {
      pos_ = buf_->data() + size;
    } else {
      buf_->resize(size);
    }
  }

 private:
  // Out of line: most varints written are a byte.
  [[gnu::noinline]] void WriteLongVarint(uint64_t v) {
    uint8_t bytes[10] = {};
    size_t n = 0;
    while (v >= 0x80) {
      bytes[n++] = static_cast<uint8_t>(v | 0x80);
      v >>= 7;
    }
    bytes[n++] = static_cast<uint8_t>(v);
    if (static_cast<size_t>(end_ - pos_) >= sizeof bytes) {
      std::memcpy(pos_, bytes, sizeof bytes);  // whole: the n that count are in front
      pos_ += n;
      return;
    }
    WriteSlow(bytes, n);
  }
  // Appending: grows the vector by n. In place: grows the room to hold n more bytes.
  void WriteSlow(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    if (!used_) {
      buf_->insert(buf_->end(), b, b + n);
      return;
    }
    Grow(n);
    std::memcpy(pos_, b, n);
    pos_ += n;
  }
  // Reserve when the room is short. Appending: the vector grows by n (pos_ stays null).
  [[gnu::noinline]] uint8_t* ReserveSlow(size_t n) {
    if (!used_) {
      const size_t at = buf_->size();
      buf_->resize(at + n);
      return buf_->data() + at;
    }
    Grow(n);
    uint8_t* at = pos_;
    pos_ += n;
    return at;
  }
  // In place: grows the vector (at least doubling it) so that the room holds n bytes.
  void Grow(size_t n) {
    const size_t at = static_cast<size_t>(pos_ - buf_->data());
    buf_->resize(std::max(at + n, 2 * buf_->size() + 64));
    pos_ = buf_->data() + at;
    end_ = buf_->data() + buf_->size();
  }

  std::vector<uint8_t>* buf_;
  size_t* used_ = nullptr;  // null: appending
  uint8_t* pos_ = nullptr;  // appending: null, so that every write takes WriteSlow
  uint8_t* end_ = nullptr;
};

// Thrown when input ends early or holds an impossible value; callers at file and
// channel boundaries turn it into Status::Corruption naming the file.
class DeserializationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads from a byte range it does not own.
class DataInput {
 public:
  DataInput(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {}
  explicit DataInput(const std::vector<uint8_t>& v) : p_(v.data()), end_(v.data() + v.size()) {}
  bool AtEnd() const { return p_ >= end_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* position() const { return p_; }
  void ReadBytes(void* out, size_t n) {
    Need(n);
    CopyBytes(static_cast<uint8_t*>(out), p_, n);
    p_ += n;
  }
  template <class T>
  T ReadFixed() {
    Need(sizeof(T));
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  uint64_t ReadVarint() {
    if (p_ != end_ && *p_ < 0x80) [[likely]] return *p_++;
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      Need(1);
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    throw DeserializationError("varint longer than 10 bytes");
  }
  void Skip(size_t n) {
    Need(n);
    p_ += n;
  }

 private:
  // Inline: a compare and a branch on every read; the throw is out of line.
  void Need(size_t n) const {
    if (static_cast<size_t>(end_ - p_) < n) [[unlikely]] ThrowUnexpectedEnd();
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void ThrowUnexpectedEnd() {
    throw DeserializationError("unexpected end of data");
  }
  const uint8_t* p_;
  const uint8_t* end_;
};

template <class T, class Enable = void>
struct Serializer;

// Types with WEIR_FIELDS(...).
template <class T, class = void>
struct HasWeirFields : std::false_type {};
template <class T>
struct HasWeirFields<T, std::void_t<decltype(std::declval<T&>().weir_fields())>> : std::true_type {};

template <class T>
struct Serializer<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static void Write(DataOutput& out, const T& v) { out.WriteFixed<T>(v); }
  static void Read(DataInput& in, T& v) { v = in.ReadFixed<T>(); }
};

template <class T>
struct Serializer<T, std::enable_if_t<std::is_enum_v<T>>> {
  using U = std::underlying_type_t<T>;
  static void Write(DataOutput& out, const T& v) { out.WriteFixed<U>(static_cast<U>(v)); }
  static void Read(DataInput& in, T& v) { v = static_cast<T>(in.ReadFixed<U>()); }
};

template <>
struct Serializer<std::string> {
  static void Write(DataOutput& out, const std::string& v) {
    out.WriteVarint(v.size());
    out.WriteBytes(v.data(), v.size());
  }
  static void Read(DataInput& in, std::string& v) {
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) throw DeserializationError("string longer than its data");
    AssignBytes(v, std::string_view(reinterpret_cast<const char*>(in.position()), n));
    in.Skip(n);
  }
};

template <class A, class B>
struct Serializer<std::pair<A, B>> {
  static void Write(DataOutput& out, const std::pair<A, B>& v) {
    Serializer<A>::Write(out, v.first);
    Serializer<B>::Write(out, v.second);
  }
  static void Read(DataInput& in, std::pair<A, B>& v) {
    Serializer<std::remove_const_t<A>>::Read(in, const_cast<std::remove_const_t<A>&>(v.first));
    Serializer<B>::Read(in, v.second);
  }
};

template <class... Ts>
struct Serializer<std::tuple<Ts...>> {
  static void Write(DataOutput& out, const std::tuple<Ts...>& v) {
    std::apply([&](const auto&... e) { (Serializer<std::decay_t<decltype(e)>>::Write(out, e), ...); }, v);
  }
  static void Read(DataInput& in, std::tuple<Ts...>& v) {
    std::apply([&](auto&... e) { (Serializer<std::decay_t<decltype(e)>>::Read(in, e), ...); }, v);
  }
};

// A vector of numbers (bool aside: std::vector<bool> holds bits) is written as its
// elements' bytes in one copy: the bytes one WriteFixed per element writes, so the format
// is the same either way, but a megabyte of bytes (the in-flight data an unaligned
// checkpoint persists, operator state, the state inline in a checkpoint's metadata)
// costs a memcpy, not a write call per byte.
template <class T>
struct Serializer<std::vector<T>> {
  static constexpr bool kElementsAsBytes = std::is_arithmetic_v<T> && !std::is_same_v<T, bool>;
  static void Write(DataOutput& out, const std::vector<T>& v) {
    out.WriteVarint(v.size());
    if constexpr (kElementsAsBytes) {
      out.WriteBytes(v.data(), v.size() * sizeof(T));
    } else {
      for (const auto& e : v) Serializer<T>::Write(out, e);
    }
  }
  static void Read(DataInput& in, std::vector<T>& v) {
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) throw DeserializationError("vector longer than its data");
    v.clear();
    if constexpr (kElementsAsBytes) {
      if (n > in.remaining() / sizeof(T)) throw DeserializationError("vector longer than its data");
      v.resize(n);
      in.ReadBytes(v.data(), n * sizeof(T));
    } else if constexpr (std::is_same_v<T, bool>) {
      v.resize(n);
      for (size_t i = 0; i < n; ++i) v[i] = in.ReadFixed<bool>();  // bits: no bool& to read into
    } else {
      v.resize(n);
      for (auto& e : v) Serializer<T>::Read(in, e);
    }
  }
};

template <class T>
struct Serializer<std::optional<T>> {
  static void Write(DataOutput& out, const std::optional<T>& v) {
    out.WriteFixed<uint8_t>(v.has_value() ? 1 : 0);
    if (v) Serializer<T>::Write(out, *v);
  }
  static void Read(DataInput& in, std::optional<T>& v) {
    uint8_t has = in.ReadFixed<uint8_t>();
    if (has > 1) throw DeserializationError("bad optional tag");
    if (!has) {
      v.reset();
      return;
    }
    T e{};
    Serializer<T>::Read(in, e);
    v = std::move(e);
  }
};

template <class M>
struct MapSerializer {
  using K = typename M::key_type;
  using V = typename M::mapped_type;
  static void Write(DataOutput& out, const M& m) {
    out.WriteVarint(m.size());
    for (const auto& [k, v] : m) {
      Serializer<K>::Write(out, k);
      Serializer<V>::Write(out, v);
    }
  }
  static void Read(DataInput& in, M& m) {
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) throw DeserializationError("map longer than its data");
    m.clear();
    for (uint64_t i = 0; i < n; ++i) {
      K k{};
      V v{};
      Serializer<K>::Read(in, k);
      Serializer<V>::Read(in, v);
      m.emplace(std::move(k), std::move(v));
    }
  }
};
template <class K, class V, class C, class A>
struct Serializer<std::map<K, V, C, A>> : MapSerializer<std::map<K, V, C, A>> {};
template <class K, class V, class H, class E, class A>
struct Serializer<std::unordered_map<K, V, H, E, A>> : MapSerializer<std::unordered_map<K, V, H, E, A>> {};

template <class T>
struct Serializer<T, std::enable_if_t<HasWeirFields<T>::value>> {
  static void Write(DataOutput& out, const T& v) {
    std::apply([&](const auto&... e) { (Serializer<std::decay_t<decltype(e)>>::Write(out, e), ...); },
               v.weir_fields());
  }
  static void Read(DataInput& in, T& v) {
    std::apply([&](auto&... e) { (Serializer<std::decay_t<decltype(e)>>::Read(in, e), ...); },
               v.weir_fields());
  }
};

// Serializer<T>::Write's bytes written straight into memory that has room for them, for
// the channels' hot path (RecordWriterOutput checks the room once per record, not once
// per field). DirectWriter<T>::kDefined says whether T has one; then Size(v) is the
// number of bytes Serializer<T>::Write writes for v, or 0 when v is not written this way
// (a string of 128 bytes or more, whose length takes more than a byte), and
// Write(at, v) writes them at `at` and returns their end. Defined for numbers, strings
// and pairs of those; others always take Serializer<T>::Write.
template <class T, class Enable = void>
struct DirectWriter {
  static constexpr bool kDefined = false;
};

template <class T>
struct DirectWriter<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static constexpr bool kDefined = true;
  static size_t Size(const T&) { return sizeof(T); }
  static uint8_t* Write(uint8_t* at, const T& v) {
    std::memcpy(at, &v, sizeof(T));
    return at + sizeof(T);
  }
};

template <>
struct DirectWriter<std::string> {
  static constexpr bool kDefined = true;
  static size_t Size(const std::string& v) { return v.size() < 0x80 ? v.size() + 1 : 0; }
  [[gnu::always_inline]] static uint8_t* Write(uint8_t* at, const std::string& v) {
    const size_t n = v.size();
    *at = static_cast<uint8_t>(n);  // the varint of a length below 128
    CopyBytes(at + 1, reinterpret_cast<const uint8_t*>(v.data()), n);
    return at + 1 + n;
  }
};

template <class A, class B>
struct DirectWriter<std::pair<A, B>, std::enable_if_t<DirectWriter<A>::kDefined && DirectWriter<B>::kDefined>> {
  static constexpr bool kDefined = true;
  static size_t Size(const std::pair<A, B>& v) {
    const size_t a = DirectWriter<A>::Size(v.first);
    const size_t b = DirectWriter<B>::Size(v.second);
    return a == 0 || b == 0 ? 0 : a + b;
  }
  [[gnu::always_inline]] static uint8_t* Write(uint8_t* at, const std::pair<A, B>& v) {
    return DirectWriter<B>::Write(DirectWriter<A>::Write(at, v.first), v.second);
  }
};

// What DirectWriter<T> writes, read back inline, for the channels' hot path (a record read
// with one out-of-line call per string cost more than the reading itself). Read(in, v)
// reads a record of that form into v and returns true, or returns false with `in` where
// it was when the bytes are not of that form (a string of 128 bytes or more) or run
// out; v may then be changed, and Serializer<T>::Read reads the record (ReadRecord).
template <class T, class Enable = void>
struct DirectReader {
  static constexpr bool kDefined = false;
};

template <class T>
struct DirectReader<T, std::enable_if_t<std::is_arithmetic_v<T>>> {
  static constexpr bool kDefined = true;
  [[gnu::always_inline]] static bool Read(DataInput& in, T& v) {
    if (in.remaining() < sizeof(T)) return false;
    v = in.ReadFixed<T>();
    return true;
  }
};

template <>
struct DirectReader<std::string> {
  static constexpr bool kDefined = true;
  [[gnu::always_inline]] static bool Read(DataInput& in, std::string& v) {
    const uint8_t* at = in.position();
    const size_t room = in.remaining();
    // A length below 128 (one byte), and that many bytes after it.
    if (room == 0 || *at >= 0x80 || *at >= room) return false;
    const size_t n = *at;
    if (n <= kShortString && room > kShortString + 1) [[likely]] {
      AssignShort(v, reinterpret_cast<const char*>(at + 1), n);
    } else {
      AssignBytes(v, std::string_view(reinterpret_cast<const char*>(at + 1), n));
    }
    in.Skip(n + 1);
    return true;
  }
};

template <class A, class B>
struct DirectReader<std::pair<A, B>, std::enable_if_t<DirectReader<A>::kDefined && DirectReader<B>::kDefined>> {
  static constexpr bool kDefined = true;
  [[gnu::always_inline]] static bool Read(DataInput& in, std::pair<A, B>& v) {
    DataInput from = in;  // `in` moves only when both fields are of the form
    if (!DirectReader<A>::Read(from, v.first) || !DirectReader<B>::Read(from, v.second)) return false;
    in = from;
    return true;
  }
};

// Serializer<T>::Read, inline for the strings and pairs DirectReader<T> reads (a number's
// Serializer::Read is inline already).
template <class T>
[[gnu::always_inline]] inline void ReadRecord(DataInput& in, T& v) {
  if constexpr (DirectReader<T>::kDefined && !std::is_arithmetic_v<T>) {
    if (DirectReader<T>::Read(in, v)) [[likely]] return;
  }
  Serializer<T>::Read(in, v);
}

// Convenience: serialize a value to bytes, and back.
template <class T>
std::vector<uint8_t> SerializeToBytes(const T& v) {
  std::vector<uint8_t> buf;
  DataOutput out(&buf);
  Serializer<T>::Write(out, v);
  return buf;
}
// The bytes of v, written into *scratch: valid until scratch is written again. Writes
// in place, so a scratch reused from call to call keeps its size and grows only for a
// larger value.
template <class T>
std::string_view SerializeInto(const T& v, std::vector<uint8_t>* scratch) {
  size_t used = 0;
  {
    DataOutput out(scratch, &used);
    Serializer<T>::Write(out, v);
  }
  return {reinterpret_cast<const char*>(scratch->data()), used};
}
template <class T>
T DeserializeFromBytes(const std::vector<uint8_t>& bytes) {
  DataInput in(bytes);
  T v{};
  Serializer<T>::Read(in, v);
  return v;
}

}  // namespace weir

// Inside a struct: makes it serializable, comparable and hashable as a key by its
// fields. `struct P { int a; std::string b; WEIR_FIELDS(a, b) };`
#define WEIR_FIELDS(...)                                                      \
  auto weir_fields() { return std::tie(__VA_ARGS__); }                        \
  auto weir_fields() const { return std::tie(__VA_ARGS__); }
