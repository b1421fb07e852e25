#include <catch2/catch.hpp>

#include "lib/api/key_groups.h"
#include "lib/api/serialization.h"

namespace {
struct Trade {
  std::string symbol;
  int64_t qty = 0;
  double price = 0;
  std::optional<std::string> note;
  WEIR_FIELDS(symbol, qty, price, note)
};

template <class T>
T RoundTrip(const T& v) {
  return weir::DeserializeFromBytes<T>(weir::SerializeToBytes(v));
}
}  // namespace

TEST_CASE("serialization: built-in types round-trip", "[api]") {
  CHECK(RoundTrip<int32_t>(-42) == -42);
  CHECK(RoundTrip<int64_t>(INT64_MIN) == INT64_MIN);
  CHECK(RoundTrip<uint8_t>(255) == 255);
  CHECK(RoundTrip<double>(3.25) == 3.25);
  CHECK(RoundTrip<bool>(true));
  CHECK(RoundTrip<std::string>("") == "");
  CHECK(RoundTrip<std::string>(std::string(1000, 'x')) == std::string(1000, 'x'));
  CHECK(RoundTrip(std::pair<std::string, int64_t>{"a", 7}) == std::pair<std::string, int64_t>{"a", 7});
  CHECK(RoundTrip(std::tuple<int, std::string, double>{1, "b", 2.5}) ==
        std::tuple<int, std::string, double>{1, "b", 2.5});
  CHECK(RoundTrip(std::vector<int64_t>{1, 2, 3}) == std::vector<int64_t>{1, 2, 3});
  CHECK(RoundTrip(std::optional<int>{}) == std::nullopt);
  CHECK(RoundTrip(std::optional<int>{5}) == 5);
  std::map<std::string, std::vector<int>> m{{"x", {1}}, {"y", {}}};
  CHECK(RoundTrip(m) == m);
}

TEST_CASE("serialization: user structs with WEIR_FIELDS", "[api]") {
  Trade t{"ACME", 100, 9.5, "big"};
  Trade back = RoundTrip(t);
  CHECK(back.symbol == "ACME");
  CHECK(back.qty == 100);
  CHECK(back.price == 9.5);
  CHECK(back.note == "big");
}

TEST_CASE("serialization: the encoding is fixed (little-endian, LEB128 lengths)", "[api]") {
  CHECK(weir::SerializeToBytes<int32_t>(1) == std::vector<uint8_t>{1, 0, 0, 0});
  CHECK(weir::SerializeToBytes<std::string>("hi") == std::vector<uint8_t>{2, 'h', 'i'});
  auto long_string = weir::SerializeToBytes(std::string(200, 'a'));
  CHECK(long_string[0] == 0xc8);
  CHECK(long_string[1] == 0x01);
}

TEST_CASE("serialization: truncated or impossible data throws", "[api]") {
  auto bytes = weir::SerializeToBytes(std::string("hello"));
  bytes.pop_back();
  CHECK_THROWS_AS(weir::DeserializeFromBytes<std::string>(bytes), weir::DeserializationError);
  CHECK_THROWS_AS(weir::DeserializeFromBytes<int64_t>(std::vector<uint8_t>{1, 2}), weir::DeserializationError);
  CHECK_THROWS_AS(weir::DeserializeFromBytes<std::optional<int>>(std::vector<uint8_t>{7, 0, 0, 0, 0}),
                  weir::DeserializationError);
  // A length far beyond the data is rejected before allocating.
  CHECK_THROWS_AS(weir::DeserializeFromBytes<std::vector<int>>(std::vector<uint8_t>{0xff, 0xff, 0xff, 0x7f}),
                  weir::DeserializationError);
}

// Vectors of numbers go as one copy of their bytes; the encoding must stay the one each
// element written on its own gives (snapshots written before are read with it).
template <class T>
std::vector<uint8_t> ElementByElement(const std::vector<T>& v) {
  std::vector<uint8_t> buf;
  weir::DataOutput out(&buf);
  out.WriteVarint(v.size());
  for (const T& e : v) weir::Serializer<T>::Write(out, e);
  return buf;
}

TEST_CASE("serialization: vectors of numbers keep the element-by-element encoding", "[api]") {
  std::vector<uint8_t> bytes(300'000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + i / 256);
  const std::vector<int64_t> longs{0, -1, INT64_MIN, INT64_MAX, 1234567890123};
  const std::vector<double> doubles{0.0, -2.5, 1e300};
  const std::vector<uint16_t> shorts{1, 65535, 256};
  const std::vector<bool> bools{true, false, true};  // bits, not bytes: element by element
  CHECK(weir::SerializeToBytes(bytes) == ElementByElement(bytes));
  CHECK(weir::SerializeToBytes(longs) == ElementByElement(longs));
  CHECK(weir::SerializeToBytes(doubles) == ElementByElement(doubles));
  CHECK(weir::SerializeToBytes(shorts) == ElementByElement(shorts));
  CHECK(weir::SerializeToBytes(bools) == ElementByElement(bools));
  CHECK(weir::SerializeToBytes(std::vector<uint8_t>{}) == std::vector<uint8_t>{0});
  CHECK(RoundTrip(bytes) == bytes);
  CHECK(RoundTrip(longs) == longs);
  CHECK(RoundTrip(doubles) == doubles);
  CHECK(RoundTrip(shorts) == shorts);
  CHECK(RoundTrip(bools) == bools);
  // Nested, as the checkpoint formats keep their byte streams.
  const std::vector<std::vector<uint8_t>> nested{{1, 2, 3}, {}, bytes};
  CHECK(RoundTrip(nested) == nested);
  // Written in place, into a buffer with room for part of them only.
  std::vector<uint8_t> buf(16);
  size_t used = 0;
  {
    weir::DataOutput out(&buf, &used);
    weir::Serializer<std::vector<int64_t>>::Write(out, longs);
  }
  buf.resize(used);
  CHECK(buf == ElementByElement(longs));
}

TEST_CASE("serialization: a vector of numbers longer than its data throws", "[api]") {
  // 3 int64 announced, 2 and a half there: the count of elements fits in the bytes left,
  // their bytes do not.
  std::vector<uint8_t> bytes = weir::SerializeToBytes(std::vector<int64_t>{1, 2, 3});
  bytes.resize(bytes.size() - 4);
  CHECK_THROWS_AS(weir::DeserializeFromBytes<std::vector<int64_t>>(bytes), weir::DeserializationError);
  bytes = weir::SerializeToBytes(std::vector<uint8_t>{1, 2, 3});
  bytes.pop_back();
  CHECK_THROWS_AS(weir::DeserializeFromBytes<std::vector<uint8_t>>(bytes), weir::DeserializationError);
}

TEST_CASE("serialization: many records in one buffer read back in order", "[api]") {
  std::vector<uint8_t> buf;
  weir::DataOutput out(&buf);
  for (int64_t i = 0; i < 1000; ++i) weir::Serializer<int64_t>::Write(out, i);
  weir::DataInput in(buf);
  int64_t expected = 0;
  while (!in.AtEnd()) {
    int64_t v;
    weir::Serializer<int64_t>::Read(in, v);
    CHECK(v == expected++);
  }
  CHECK(expected == 1000);
}

TEST_CASE("serialization: strings of every short length, appended and written in place", "[api]") {
  // Short copies and one-byte lengths take fast paths: every size around their edges.
  for (size_t n = 0; n <= 300; ++n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + (i * 7 + n) % 26);
    std::vector<uint8_t> expected;
    for (uint64_t v = n; ; v >>= 7) {  // LEB128 length, then the bytes
      expected.push_back(static_cast<uint8_t>(v >= 0x80 ? (v & 0x7f) | 0x80 : v));
      if (v < 0x80) break;
    }
    expected.insert(expected.end(), s.begin(), s.end());
    CHECK(weir::SerializeToBytes(s) == expected);

    std::vector<uint8_t> scratch(n % 5);  // in place, room for some of it or none
    std::string_view bytes = weir::SerializeInto(s, &scratch);
    CHECK(std::vector<uint8_t>(bytes.begin(), bytes.end()) == expected);
    bytes = weir::SerializeInto(std::make_pair(s, int64_t{7}), &scratch);  // the same scratch again
    weir::DataInput in(reinterpret_cast<const uint8_t*>(bytes.data()),
                       reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size());
    std::pair<std::string, int64_t> back;
    weir::Serializer<std::pair<std::string, int64_t>>::Read(in, back);
    CHECK(in.AtEnd());
    CHECK(back == std::make_pair(s, int64_t{7}));
  }
}

TEST_CASE("serialization: a string read into one reused from record to record", "[api]") {
  // Each length read into a string that held each other length: shorter, as long, longer.
  auto text = [](size_t n, char first) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>(first + i % 20);
    return s;
  };
  for (size_t before = 0; before <= 40; ++before) {
    for (size_t n = 0; n <= 40; ++n) {
      std::string reused = text(before, 'A');
      const std::string s = text(n, 'a');
      const std::vector<uint8_t> bytes = weir::SerializeToBytes(s);
      weir::DataInput in(bytes);
      weir::Serializer<std::string>::Read(in, reused);
      CHECK(in.AtEnd());
      REQUIRE(reused == s);
      CHECK(reused.c_str()[n] == '\0');
    }
  }
}

TEST_CASE("serialization: AssignBytes refills a string within its room or beyond it", "[api]") {
  std::string s(64, 'x');
  const char* const buffer = s.data();
  const std::string source = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-+";  // 64
  for (size_t n : {0, 1, 3, 4, 7, 8, 9, 16, 17, 40, 64, 5, 63}) {  // shorter and longer in turn
    weir::AssignBytes(s, std::string_view(source).substr(0, n));
    REQUIRE(s == source.substr(0, n));
    CHECK(s.c_str()[n] == '\0');
    CHECK(s.data() == buffer);  // within the capacity: the same buffer, refilled
  }
  std::string small;  // beyond the capacity: grows like assign
  weir::AssignBytes(small, source);
  CHECK(small == source);
  weir::AssignBytes(small, "");
  CHECK(small.empty());
}

TEST_CASE("serialization: AssignBytes from a part of the string itself", "[api]") {
  const std::string original = "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";  // 52
  for (size_t from = 0; from <= original.size(); ++from) {
    for (size_t n = 0; from + n <= original.size(); ++n) {
      std::string s = original;
      weir::AssignBytes(s, std::string_view(s).substr(from, n));
      REQUIRE(s == original.substr(from, n));
      CHECK(s.c_str()[n] == '\0');
    }
  }
}

TEST_CASE("serialization: SameBytes against == at every length and differing byte", "[api]") {
  const std::string base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";  // 42
  for (size_t n = 0; n <= base.size(); ++n) {
    const std::string a = base.substr(0, n);
    std::string b = a;
    REQUIRE(weir::SameBytes(a, b));
    for (size_t i = 0; i < n; ++i) {
      b[i] ^= 0x20;  // one byte differs, first, last or within the overlap of the loads
      REQUIRE_FALSE(weir::SameBytes(a, b));
      b[i] ^= 0x20;
    }
    if (n > 0) REQUIRE_FALSE(weir::SameBytes(a, a.substr(0, n - 1)));  // a prefix is not equal
    REQUIRE_FALSE(weir::SameBytes(a, a + "x"));
  }
  CHECK(weir::KeyEqual<std::string>{}(std::string("word"), std::string("word")));
  CHECK_FALSE(weir::KeyEqual<std::string>{}(std::string("word"), std::string("worm")));
}

TEST_CASE("serialization: DirectWriter writes the bytes Serializer writes, or declines", "[api]") {
  // Fills 160 bytes with 0xee, writes v at offset 3, checks the bytes against
  // Serializer<T>::Write's and that nothing around them was touched.
  auto check = [](const auto& v) {
    using T = std::decay_t<decltype(v)>;
    const std::vector<uint8_t> expected = weir::SerializeToBytes(v);
    const size_t size = weir::DirectWriter<T>::Size(v);
    if (size == 0) return false;
    REQUIRE(size == expected.size());
    std::vector<uint8_t> memory(160, 0xee);
    uint8_t* end = weir::DirectWriter<T>::Write(memory.data() + 3, v);
    REQUIRE(end == memory.data() + 3 + size);
    CHECK(std::vector<uint8_t>(memory.begin() + 3, memory.begin() + 3 + static_cast<long>(size)) == expected);
    CHECK(std::count(memory.begin(), memory.end(), 0xee) == static_cast<long>(memory.size() - size));
    return true;
  };
  for (size_t n = 0; n <= 150; ++n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + (i * 7 + n) % 26);
    INFO("length " << n);
    // A length below 128 is one byte: those are written directly, longer ones decline.
    CHECK(check(s) == (n < 128));
    CHECK(check(std::make_pair(s, int64_t{-7})) == (n < 128));
    CHECK(check(std::make_pair(s, 2.5)) == (n < 128));
    CHECK(check(std::make_pair(int32_t{9}, s)) == (n < 128));
  }
  CHECK(check(int64_t{-3'000'000'000'000}));
  CHECK(check(uint8_t{200}));
  CHECK(check(std::make_pair(int64_t{1}, 0.5)));
  CHECK(check(std::make_pair(std::string("a"), std::string(127, 'b'))));
  CHECK_FALSE(check(std::make_pair(std::string("a"), std::string(128, 'b'))));
  STATIC_REQUIRE_FALSE(weir::DirectWriter<std::vector<int>>::kDefined);
  STATIC_REQUIRE_FALSE(weir::DirectWriter<std::pair<std::string, std::vector<int>>>::kDefined);
}

TEST_CASE("serialization: DirectReader reads what Serializer writes, or declines and moves nothing", "[api]") {
  // Reads v's bytes with DirectReader into a record reused from call to call (its string
  // shrinks and grows), and with ReadRecord; returns whether DirectReader read them.
  auto check = [](const auto& v, auto& reused) {
    using T = std::decay_t<decltype(v)>;
    const std::vector<uint8_t> bytes = weir::SerializeToBytes(v);
    weir::DataInput in(bytes.data(), bytes.data() + bytes.size());
    const bool direct = weir::DirectReader<T>::Read(in, reused);
    if (direct) {
      CHECK(reused == v);
      CHECK(in.AtEnd());
    } else {
      CHECK(in.position() == bytes.data());
    }
    weir::DataInput again(bytes.data(), bytes.data() + bytes.size());
    weir::ReadRecord(again, reused);
    CHECK(reused == v);
    CHECK(again.AtEnd());
    // Cut short anywhere, the record is not read: DirectReader declines where it was, and
    // ReadRecord throws as Serializer does.
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      weir::DataInput part(bytes.data(), bytes.data() + cut);
      T scratch{};
      CHECK_FALSE(weir::DirectReader<T>::Read(part, scratch));
      CHECK(part.position() == bytes.data());
      weir::DataInput thrown(bytes.data(), bytes.data() + cut);
      CHECK_THROWS_AS(weir::ReadRecord(thrown, scratch), weir::DeserializationError);
    }
    return direct;
  };
  std::string word;
  std::pair<std::string, int64_t> count;
  std::pair<int32_t, std::string> tagged;
  for (size_t n : {0, 1, 5, 3, 8, 7, 16, 15, 17, 40, 2, 127, 128, 150, 9, 126, 0}) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>('a' + (i * 7 + n) % 26);
    INFO("length " << n);
    // A length below 128 is one byte: those are read directly, longer ones decline.
    CHECK(check(s, word) == (n < 128));
    CHECK(check(std::make_pair(s, int64_t{-7} - static_cast<int64_t>(n)), count) == (n < 128));
    CHECK(check(std::make_pair(int32_t{9}, s), tagged) == (n < 128));
  }
  int64_t number = 0;
  CHECK(check(int64_t{-3'000'000'000'000}, number));
  std::pair<int64_t, double> numbers;
  CHECK(check(std::make_pair(int64_t{1}, 0.5), numbers));
  STATIC_REQUIRE_FALSE(weir::DirectReader<std::vector<int>>::kDefined);
  STATIC_REQUIRE_FALSE(weir::DirectReader<std::pair<std::string, std::vector<int>>>::kDefined);
}

TEST_CASE("serialization: CopyBytes at every length", "[api]") {
  const std::string source = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";  // 42
  for (size_t n = 0; n <= source.size(); ++n) {
    std::string to(source.size() + 1, '.');
    weir::CopyBytes(reinterpret_cast<uint8_t*>(to.data()), reinterpret_cast<const uint8_t*>(source.data()), n);
    REQUIRE(to == source.substr(0, n) + std::string(source.size() + 1 - n, '.'));
  }
}

// A string of n bytes whose buffer holds other bytes past its terminator: what a string
// refilled with a shorter one holds.
static std::string ShortenedFrom(const std::string& longer, size_t n) {
  std::string s = longer;
  s.resize(n);
  return s;
}

TEST_CASE("serialization: SameString ignores the bytes past a string's end", "[api]") {
  const std::string base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";  // 42
  for (size_t n = 0; n <= base.size(); ++n) {
    const std::string a = ShortenedFrom(base, n);
    std::string b = ShortenedFrom(base.substr(0, n) + "0123456789abcdef", n);  // other bytes past n
    REQUIRE(weir::SameString(a, b));
    REQUIRE(weir::SameString(b, a));
    for (size_t i = 0; i < n; ++i) {
      b[i] ^= 0x20;  // one byte differs, wherever it is
      REQUIRE_FALSE(weir::SameString(a, b));
      b[i] ^= 0x20;
    }
    if (n > 0) REQUIRE_FALSE(weir::SameString(a, a.substr(0, n - 1)));
    REQUIRE_FALSE(weir::SameString(a, a + "x"));
  }
}

TEST_CASE("serialization: AssignShort refills a string from a padded buffer", "[api]") {
  const std::string source = "abcdefghijklmnopqrstuvwxyz";  // 16 bytes readable from each start below 11
  for (std::string s : {std::string(), std::string("a word"), std::string(40, 'x')}) {
    for (size_t n : {0, 1, 2, 3, 8, 15, 4, 0, 7}) {  // shorter and longer in turn
      weir::AssignShort(s, source.data() + n % 11, n);
      REQUIRE(s == source.substr(n % 11, n));
      CHECK(s.c_str()[n] == '\0');
    }
  }
}

TEST_CASE("serialization: CopyString and OverwriteString", "[api]") {
  const std::string base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";  // 42
  for (size_t n = 0; n <= base.size(); ++n) {
    const std::string word = base.substr(0, n);
    std::string to(64, '.');
    weir::CopyString(to.data(), word);
    REQUIRE(to.substr(0, n) == word);
    REQUIRE(to.substr(std::max<size_t>(n, 16)) == std::string(64 - std::max<size_t>(n, 16), '.'));
  }
  std::string line = "old";
  for (size_t n : {0, 5, 100, 3, 40}) {
    weir::OverwriteString(line, n + 2, [&](char* data) {
      for (size_t i = 0; i < n; ++i) data[i] = static_cast<char>('a' + i % 26);
      return n;
    });
    REQUIRE(line.size() == n);
    CHECK(line.c_str()[n] == '\0');
    for (size_t i = 0; i < n; ++i) REQUIRE(line[i] == static_cast<char>('a' + i % 26));
  }
}

TEST_CASE("serialization: ReadRecord of a word and its count at every length", "[api]") {
  // Read into a record that held each other length, from a buffer that ends with the
  // record (fewer than 16 bytes after a short word) or goes on after it.
  using WordCount = std::pair<std::string, int64_t>;
  const std::string base = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEF";  // 42
  for (size_t padding : {0, 32}) {
    for (size_t before = 0; before <= 20; ++before) {
      for (size_t n = 0; n <= base.size(); ++n) {
        const WordCount record{base.substr(0, n), static_cast<int64_t>(n) * 1000 + 7};
        std::vector<uint8_t> bytes = weir::SerializeToBytes(record);
        const size_t size = bytes.size();
        bytes.resize(size + padding, 0xee);
        weir::DataInput in(bytes.data(), bytes.data() + size + padding);
        WordCount reused{std::string(before, 'Z'), -1};
        weir::ReadRecord(in, reused);
        REQUIRE(reused == record);
        CHECK(reused.first.c_str()[n] == '\0');
        CHECK(in.position() == bytes.data() + size);
      }
    }
  }
}
