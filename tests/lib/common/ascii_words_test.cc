#include <catch2/catch.hpp>

#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "lib/common/ascii_words.h"

namespace {

// The definition, one byte at a time with the C library.
std::vector<std::string> ReferenceWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

std::vector<std::string> SplitterWords(weir::AsciiWordSplitter& splitter, const std::string& text) {
  std::vector<std::string> words;
  splitter.Split(text, [&](std::string_view w) { words.emplace_back(w); });
  return words;
}

}  // namespace

TEST_CASE("ascii words: letters and digits, lower-cased; everything else separates", "[common]") {
  weir::AsciiWordSplitter s;
  CHECK(SplitterWords(s, "").empty());
  CHECK(SplitterWords(s, " ,.;\t").empty());
  CHECK(SplitterWords(s, "Hello, World!") == std::vector<std::string>{"hello", "world"});
  CHECK(SplitterWords(s, "a") == std::vector<std::string>{"a"});
  CHECK(SplitterWords(s, "R2D2 ate 42 @Zebras_") == std::vector<std::string>{"r2d2", "ate", "42", "zebras"});
  // Bytes of UTF-8 characters separate words, as isalnum in the "C" locale.
  CHECK(SplitterWords(s, "caf\xc3\xa9 na\xc3\xafve") == std::vector<std::string>{"caf", "na", "ve"});
  // The neighbours of each range: '@' '[' '`' '{' '/' ':' and bytes >= 0x80.
  CHECK(SplitterWords(s, "@A[Z`a{z/0:9\x80x\xff") ==
        std::vector<std::string>{"a", "z", "a", "z", "0", "9", "x"});
}

TEST_CASE("ascii words: every byte value, in and around words", "[common]") {
  weir::AsciiWordSplitter s;
  std::string text;
  for (int b = 0; b < 256; ++b) {
    text += "ab";
    text += static_cast<char>(b);
    text += "Cd ";
  }
  CHECK(SplitterWords(s, text) == ReferenceWords(text));
}

TEST_CASE("ascii words: words across 64-byte blocks, long words, whole-line words", "[common]") {
  weir::AsciiWordSplitter s;
  for (size_t len : {1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 200}) {
    for (size_t lead : {0, 1, 31, 62, 63, 64}) {
      std::string text = std::string(lead, ' ') + std::string(len, 'Q') + " x";
      INFO("lead " << lead << ", length " << len);
      CHECK(SplitterWords(s, text) == ReferenceWords(text));
      std::string whole(len, 'k');  // one word ending where the text ends
      CHECK(SplitterWords(s, whole) == std::vector<std::string>{whole});
    }
  }
}

TEST_CASE("ascii words: random text against the byte-at-a-time definition", "[common]") {
  weir::AsciiWordSplitter s;
  std::mt19937 rng(7);
  const std::string alphabet = "abcXYZ019 .,\n\t-_\x80\xc3\xff";
  for (int round = 0; round < 500; ++round) {
    std::string text(rng() % 300, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    INFO("round " << round);
    REQUIRE(SplitterWords(s, text) == ReferenceWords(text));
  }
  // Fully random bytes, and a shorter text after a longer one (the buffer is reused).
  for (int round = 0; round < 200; ++round) {
    std::string text(rng() % 1000, ' ');
    for (char& c : text) c = static_cast<char>(rng());
    REQUIRE(SplitterWords(s, text) == ReferenceWords(text));
  }
}
