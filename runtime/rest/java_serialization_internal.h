#pragma once
// The `serialized-throwable` of Flink's failure causes: a base64 Java serialization
// stream of org.apache.flink.util.SerializedThrowable, which Flink's own REST client
// (bin/flink) must be able to deserialize, or it rejects the whole response.
//
// The stream carries the class name, the message and the full stack-trace text, with
// an empty stack trace array, no cause, no suppressed exceptions and an empty
// serializedException byte array (Flink's client then falls back to the strings).

#include <string>

namespace weir::runtime {

// `class_name`, `message` and `stack_trace` are UTF-8. An empty message is written
// as null (Java then prints just the class name).
std::string JavaSerializedThrowableBase64(const std::string& class_name, const std::string& message,
                                          const std::string& stack_trace);

}  // namespace weir::runtime
