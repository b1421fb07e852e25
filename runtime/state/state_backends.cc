#include "runtime/state/state_backends.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

namespace weir::runtime {

namespace {

std::mutex& RegistryMutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::string, BytesBackendFactory>& Registry() {
  static std::map<std::string, BytesBackendFactory> registry;
  return registry;
}

// The directory of the library this code is in (libweir.so): backend libraries are
// built beside it.
std::string OwnDirectory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || !info.dli_fname) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

}  // namespace

void RegisterBytesBackend(const std::string& type, BytesBackendFactory factory) {
  std::lock_guard lock(RegistryMutex());
  Registry()[type] = std::move(factory);
}

Status EnsureBytesBackend(const std::string& type) {
  {
    std::lock_guard lock(RegistryMutex());
    if (Registry().count(type)) return Status::OK();
  }
  std::string name = "libweir_" + type + ".so";
  std::string dir = OwnDirectory();
  std::string path = dir.empty() ? name : (std::filesystem::path(dir) / name).string();
  // Its static initializers register the backend; it stays loaded for the process.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle) {
    const char* err = ::dlerror();
    return Status::InvalidArgument("state backend '" + type + "' is not available: cannot load '" + path +
                                   "': " + (err ? err : "unknown error"))
        .WithHint("build weir with it (scripts/build.sh builds every backend), or use state.backend.type: hashmap");
  }
  std::lock_guard lock(RegistryMutex());
  if (!Registry().count(type)) {
    return Status::InvalidArgument("state backend '" + type + "': '" + path + "' registers no backend of that name");
  }
  return Status::OK();
}

Result<std::unique_ptr<BytesKeyedStateBackend>> CreateBytesBackend(const std::string& type,
                                                                  const BytesBackendSpec& spec) {
  WEIR_RETURN_IF_ERROR(EnsureBytesBackend(type));
  BytesBackendFactory factory;
  {
    std::lock_guard lock(RegistryMutex());
    factory = Registry().at(type);
  }
  return factory(spec);
}

}  // namespace weir::runtime
