#pragma once
// Splits text into words: maximal runs of ASCII letters and digits, lower-cased (what
// std::isalnum and std::tolower give in the "C" locale). Every other byte, including
// each byte of a multi-byte UTF-8 character, separates words.
//
//   AsciiWordSplitter words;
//   words.Split(line, [&](std::string_view word) { ... });
//
// The words are views into the splitter's lower-cased copy of the text, valid until the
// next Split. It classifies and lower-cases 16 bytes per step (SSE2 where the compiler
// targets it, a table otherwise) and finds word boundaries in a 64-bit mask per 64
// bytes, so its cost grows with the number of words, not of bytes. Not thread-safe:
// one per thread.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace weir {

class AsciiWordSplitter {
 public:
  // Calls on_word(std::string_view) for each word of `text`, in order.
  template <class F>
  void Split(std::string_view text, F&& on_word) {
    const size_t n = text.size();
    if (lower_.size() < n + kBlock) lower_.resize(n + kBlock);
    char* lower = lower_.data();
    size_t word_start = 0;
    bool in_word = false;
    for (size_t base = 0; base < n; base += kBlock) {
      uint64_t word_bits;
      if (n - base >= kBlock) {
        word_bits = LowerBlock(text.data() + base, lower + base);
      } else {
        // The last, partial block: padded with zero bytes, which separate words.
        char tail[kBlock] = {};
        std::memcpy(tail, text.data() + base, n - base);
        word_bits = LowerBlock(tail, lower + base);
      }
      // Walk the runs of 1 bits: a 0 -> 1 step starts a word, a 1 -> 0 step ends one.
      unsigned pos = 0;
      while (pos < kBlock) {
        if (in_word) {
          const uint64_t separators = ~word_bits >> pos;
          if (separators == 0) break;  // the word goes on into the next block
          pos += static_cast<unsigned>(__builtin_ctzll(separators));
          on_word(std::string_view(lower + word_start, base + pos - word_start));
          in_word = false;
        } else {
          const uint64_t starts = word_bits >> pos;
          if (starts == 0) break;
          pos += static_cast<unsigned>(__builtin_ctzll(starts));
          word_start = base + pos;
          in_word = true;
        }
      }
    }
    if (in_word) on_word(std::string_view(lower + word_start, n - word_start));
  }

 private:
  static constexpr size_t kBlock = 64;

  // Lower-cases 64 bytes of `in` into `out`; bit i of the result is set when in[i] is
  // a letter or a digit.
  static uint64_t LowerBlock(const char* in, char* out) {
    uint64_t bits = 0;
#if defined(__SSE2__)
    for (int i = 0; i < 4; ++i) {
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * i));
      // Signed byte compares: bytes >= 0x80 are negative and fall in no range.
      const __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('A' - 1)),
                                          _mm_cmplt_epi8(c, _mm_set1_epi8('Z' + 1)));
      const __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('a' - 1)),
                                          _mm_cmplt_epi8(c, _mm_set1_epi8('z' + 1)));
      const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('0' - 1)),
                                          _mm_cmplt_epi8(c, _mm_set1_epi8('9' + 1)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * i),
                       _mm_add_epi8(c, _mm_and_si128(upper, _mm_set1_epi8(0x20))));
      const __m128i word = _mm_or_si128(_mm_or_si128(upper, lower), digit);
      bits |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(word))) << (16 * i);
    }
#else
    for (size_t i = 0; i < kBlock; ++i) {
      const unsigned char c = static_cast<unsigned char>(in[i]);
      const bool upper = c - 'A' < 26u;
      const bool word = upper || c - 'a' < 26u || c - '0' < 10u;
      out[i] = static_cast<char>(upper ? c + 0x20 : c);
      bits |= static_cast<uint64_t>(word) << i;
    }
#endif
    return bits;
  }

  std::string lower_;
};

}  // namespace weir
