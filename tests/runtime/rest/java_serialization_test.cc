#include <catch2/catch.hpp>

#include "runtime/rest/java_serialization_internal.h"

using weir::runtime::JavaSerializedThrowableBase64;

// The expected streams were checked with Flink 2.3.0's own
// InstantiationUtil.deserializeObject, and end to end with bin/flink.
TEST_CASE("serialized-throwable: the Java stream Flink's client deserializes", "[rest]") {
  CHECK(JavaSerializedThrowableBase64("weir::SavepointDisposalException", "'x' is not a savepoint",
                                      "weir::SavepointDisposalException: 'x' is not a savepoint") ==
        "rO0ABXNyAClvcmcuYXBhY2hlLmZsaW5rLnV0aWwuU2VyaWFsaXplZFRocm93YWJsZWUWnfUfpxPzAgADTAAZZnVsbFN0cmluZ2lmaWVkU3Rh"
        "Y2tUcmFjZXQAEkxqYXZhL2xhbmcvU3RyaW5nO0wAFm9yaWdpbmFsRXJyb3JDbGFzc05hbWVxAH4AAVsAE3NlcmlhbGl6ZWRFeGNlcHRpb25"
        "0AAJbQnhyABNqYXZhLmxhbmcuRXhjZXB0aW9u0P0fPho7HMQCAAB4cgATamF2YS5sYW5nLlRocm93YWJsZdXGNSc5d7jLAwAETAAFY2F1c2"
        "V0ABVMamF2YS9sYW5nL1Rocm93YWJsZTtMAA1kZXRhaWxNZXNzYWdlcQB+AAFbAApzdGFja1RyYWNldAAeW0xqYXZhL2xhbmcvU3RhY2tUc"
        "mFjZUVsZW1lbnQ7TAAUc3VwcHJlc3NlZEV4Y2VwdGlvbnN0ABBMamF2YS91dGlsL0xpc3Q7eHBwdAAWJ3gnIGlzIG5vdCBhIHNhdmVwb2lu"
        "dHVyAB5bTGphdmEubGFuZy5TdGFja1RyYWNlRWxlbWVudDsCRio8PP0iOQIAAHhwAAAAAHNyAB9qYXZhLnV0aWwuQ29sbGVjdGlvbnMkRW1"
        "wdHlMaXN0ergXtDynnt4CAAB4cHh0ADh3ZWlyOjpTYXZlcG9pbnREaXNwb3NhbEV4Y2VwdGlvbjogJ3gnIGlzIG5vdCBhIHNhdmVwb2ludH"
        "QAIHdlaXI6OlNhdmVwb2ludERpc3Bvc2FsRXhjZXB0aW9udXIAAltCrPMX+AYIVOACAAB4cAAAAAA=");
}

TEST_CASE("serialized-throwable: modified UTF-8 for NUL and characters beyond the BMP; null message",
          "[rest]") {
  CHECK(JavaSerializedThrowableBase64("std::runtime_error", std::string("h\xc3\xa9llo \0 \xf0\x9f\x98\x80", 13),
                                      "trace") ==
        "rO0ABXNyAClvcmcuYXBhY2hlLmZsaW5rLnV0aWwuU2VyaWFsaXplZFRocm93YWJsZWUWnfUfpxPzAgADTAAZZnVsbFN0cmluZ2lmaWVkU3Rh"
        "Y2tUcmFjZXQAEkxqYXZhL2xhbmcvU3RyaW5nO0wAFm9yaWdpbmFsRXJyb3JDbGFzc05hbWVxAH4AAVsAE3NlcmlhbGl6ZWRFeGNlcHRpb25"
        "0AAJbQnhyABNqYXZhLmxhbmcuRXhjZXB0aW9u0P0fPho7HMQCAAB4cgATamF2YS5sYW5nLlRocm93YWJsZdXGNSc5d7jLAwAETAAFY2F1c2"
        "V0ABVMamF2YS9sYW5nL1Rocm93YWJsZTtMAA1kZXRhaWxNZXNzYWdlcQB+AAFbAApzdGFja1RyYWNldAAeW0xqYXZhL2xhbmcvU3RhY2tUc"
        "mFjZUVsZW1lbnQ7TAAUc3VwcHJlc3NlZEV4Y2VwdGlvbnN0ABBMamF2YS91dGlsL0xpc3Q7eHBwdAAQaMOpbGxvIMCAIO2gve24gHVyAB5b"
        "TGphdmEubGFuZy5TdGFja1RyYWNlRWxlbWVudDsCRio8PP0iOQIAAHhwAAAAAHNyAB9qYXZhLnV0aWwuQ29sbGVjdGlvbnMkRW1wdHlMaXN"
        "0ergXtDynnt4CAAB4cHh0AAV0cmFjZXQAEnN0ZDo6cnVudGltZV9lcnJvcnVyAAJbQqzzF/gGCFTgAgAAeHAAAAAA");
  CHECK(JavaSerializedThrowableBase64("C", "", "s") ==
        "rO0ABXNyAClvcmcuYXBhY2hlLmZsaW5rLnV0aWwuU2VyaWFsaXplZFRocm93YWJsZWUWnfUfpxPzAgADTAAZZnVsbFN0cmluZ2lmaWVkU3Rh"
        "Y2tUcmFjZXQAEkxqYXZhL2xhbmcvU3RyaW5nO0wAFm9yaWdpbmFsRXJyb3JDbGFzc05hbWVxAH4AAVsAE3NlcmlhbGl6ZWRFeGNlcHRpb25"
        "0AAJbQnhyABNqYXZhLmxhbmcuRXhjZXB0aW9u0P0fPho7HMQCAAB4cgATamF2YS5sYW5nLlRocm93YWJsZdXGNSc5d7jLAwAETAAFY2F1c2"
        "V0ABVMamF2YS9sYW5nL1Rocm93YWJsZTtMAA1kZXRhaWxNZXNzYWdlcQB+AAFbAApzdGFja1RyYWNldAAeW0xqYXZhL2xhbmcvU3RhY2tUc"
        "mFjZUVsZW1lbnQ7TAAUc3VwcHJlc3NlZEV4Y2VwdGlvbnN0ABBMamF2YS91dGlsL0xpc3Q7eHBwcHVyAB5bTGphdmEubGFuZy5TdGFja1Ry"
        "YWNlRWxlbWVudDsCRio8PP0iOQIAAHhwAAAAAHNyAB9qYXZhLnV0aWwuQ29sbGVjdGlvbnMkRW1wdHlMaXN0ergXtDynnt4CAAB4cHh0AAF"
        "zdAABQ3VyAAJbQqzzF/gGCFTgAgAAeHAAAAAA");
}
