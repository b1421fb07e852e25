#include "runtime/rest/java_serialization_internal.h"

#include <cstdint>
#include <vector>

namespace weir::runtime {

namespace {

using Bytes = std::vector<uint8_t>;

void Put(Bytes& o, std::initializer_list<uint8_t> bytes) { o.insert(o.end(), bytes); }
void PutHex(Bytes& o, const char* hex) {
  for (const char* p = hex; p[0] && p[1]; p += 2) {
    auto nibble = [](char c) { return static_cast<uint8_t>(c <= '9' ? c - '0' : c - 'a' + 10); };
    o.push_back(static_cast<uint8_t>(nibble(p[0]) << 4 | nibble(p[1])));
  }
}
void PutU16(Bytes& o, uint32_t v) { Put(o, {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)}); }
void PutU32(Bytes& o, uint32_t v) {
  Put(o, {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8),
          static_cast<uint8_t>(v)});
}
void PutU64(Bytes& o, uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) o.push_back(static_cast<uint8_t>(v >> s));
}
// A class or field name (ASCII): u16 length + bytes.
void PutUtf(Bytes& o, const std::string& s) {
  PutU16(o, static_cast<uint32_t>(s.size()));
  o.insert(o.end(), s.begin(), s.end());
}

// UTF-8 to code points; an invalid byte becomes U+FFFD.
std::vector<uint32_t> CodePoints(const std::string& s) {
  std::vector<uint32_t> out;
  for (size_t i = 0; i < s.size();) {
    auto b = static_cast<uint8_t>(s[i]);
    int len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out.push_back(0xFFFD);
      ++i;
      continue;
    }
    uint32_t c = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      auto cb = static_cast<uint8_t>(s[i + k]);
      if ((cb >> 6) != 2) ok = false;
      c = c << 6 | (cb & 0x3F);
    }
    out.push_back(ok ? c : 0xFFFD);
    i += ok ? len : 1;
  }
  return out;
}

// A Java string object: modified UTF-8 (NUL as C0 80, characters above U+FFFF as two
// 3-byte surrogates), TC_STRING up to 65535 bytes, else TC_LONGSTRING.
void PutJavaString(Bytes& o, const std::string& s) {
  Bytes b;
  auto three = [&](uint32_t u) {
    Put(b, {static_cast<uint8_t>(0xE0 | u >> 12), static_cast<uint8_t>(0x80 | ((u >> 6) & 0x3F)),
            static_cast<uint8_t>(0x80 | (u & 0x3F))});
  };
  for (uint32_t c : CodePoints(s)) {
    if (c == 0) {
      Put(b, {0xC0, 0x80});
    } else if (c < 0x80) {
      b.push_back(static_cast<uint8_t>(c));
    } else if (c < 0x800) {
      Put(b, {static_cast<uint8_t>(0xC0 | c >> 6), static_cast<uint8_t>(0x80 | (c & 0x3F))});
    } else if (c < 0x10000) {
      three(c);
    } else {
      c -= 0x10000;
      three(0xD800 | c >> 10);
      three(0xDC00 | (c & 0x3FF));
    }
  }
  if (b.size() <= 0xFFFF) {
    o.push_back(0x74);
    PutU16(o, static_cast<uint32_t>(b.size()));
  } else {
    o.push_back(0x7C);
    PutU64(o, b.size());
  }
  o.insert(o.end(), b.begin(), b.end());
}

std::string Base64(const Bytes& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = in[i] << 16 | in[i + 1] << 8 | in[i + 2];
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], kAlphabet[v & 63]};
  }
  if (i + 1 == in.size()) {
    uint32_t v = in[i] << 16;
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], '=', '='};
  } else if (i + 2 == in.size()) {
    uint32_t v = in[i] << 16 | in[i + 1] << 8;
    out += {kAlphabet[v >> 18], kAlphabet[(v >> 12) & 63], kAlphabet[(v >> 6) & 63], '='};
  }
  return out;
}

}  // namespace

std::string JavaSerializedThrowableBase64(const std::string& class_name, const std::string& message,
                                          const std::string& stack_trace) {
  Bytes o;
  PutHex(o, "aced0005");  // stream magic, version
  // Class descriptor of SerializedThrowable (handle 0x7e0000) and its fields.
  Put(o, {0x73, 0x72});
  PutUtf(o, "org.apache.flink.util.SerializedThrowable");
  PutHex(o, "65169df51fa713f3");  // serialVersionUID
  o.push_back(0x02);              // SC_SERIALIZABLE
  PutU16(o, 3);
  o.push_back('L');
  PutUtf(o, "fullStringifiedStackTrace");
  o.push_back(0x74);
  PutUtf(o, "Ljava/lang/String;");  // handle 0x7e0001
  o.push_back('L');
  PutUtf(o, "originalErrorClassName");
  o.push_back(0x71);
  PutU32(o, 0x7e0001);
  o.push_back('[');
  PutUtf(o, "serializedException");
  o.push_back(0x74);
  PutUtf(o, "[B");
  o.push_back(0x78);  // end of block data
  // Superclasses: java.lang.Exception, java.lang.Throwable.
  o.push_back(0x72);
  PutUtf(o, "java.lang.Exception");
  PutHex(o, "d0fd1f3e1a3b1cc4");
  Put(o, {0x02, 0x00, 0x00, 0x78});
  o.push_back(0x72);
  PutUtf(o, "java.lang.Throwable");
  PutHex(o, "d5c635273977b8cb");
  o.push_back(0x03);  // SC_SERIALIZABLE | SC_WRITE_METHOD
  PutU16(o, 4);
  o.push_back('L');
  PutUtf(o, "cause");
  o.push_back(0x74);
  PutUtf(o, "Ljava/lang/Throwable;");
  o.push_back('L');
  PutUtf(o, "detailMessage");
  o.push_back(0x71);
  PutU32(o, 0x7e0001);
  o.push_back('[');
  PutUtf(o, "stackTrace");
  o.push_back(0x74);
  PutUtf(o, "[Ljava/lang/StackTraceElement;");
  o.push_back('L');
  PutUtf(o, "suppressedExceptions");
  o.push_back(0x74);
  PutUtf(o, "Ljava/util/List;");
  Put(o, {0x78, 0x70});  // end of block data; no superclass
  // Throwable's fields, written by its writeObject.
  o.push_back(0x70);  // cause: null
  if (message.empty()) {
    o.push_back(0x70);
  } else {
    PutJavaString(o, message);
  }
  Put(o, {0x75, 0x72});  // stackTrace: an empty StackTraceElement[]
  PutUtf(o, "[Ljava.lang.StackTraceElement;");
  PutHex(o, "02462a3c3cfd2239");
  Put(o, {0x02, 0x00, 0x00, 0x78, 0x70});
  PutU32(o, 0);
  Put(o, {0x73, 0x72});  // suppressedExceptions: Collections.EMPTY_LIST
  PutUtf(o, "java.util.Collections$EmptyList");
  PutHex(o, "7ab817b43ca79ede");
  Put(o, {0x02, 0x00, 0x00, 0x78, 0x70});
  o.push_back(0x78);  // end of Throwable's writeObject data
  // SerializedThrowable's fields, in name order.
  PutJavaString(o, stack_trace);
  PutJavaString(o, class_name);
  Put(o, {0x75, 0x72});  // serializedException: byte[0]
  PutUtf(o, "[B");
  PutHex(o, "acf317f8060854e0");
  Put(o, {0x02, 0x00, 0x00, 0x78, 0x70});
  PutU32(o, 0);
  return Base64(o);
}

}  // namespace weir::runtime
