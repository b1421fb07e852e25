#include "lib/fs/file_system.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "lib/common/string_util.h"

namespace weir {

namespace {

// The scheme of "scheme:..." when it looks like one (letters, digits, '+', '-', '.',
// starting with a letter, at least two characters so that "C:" style paths are not
// taken for one); empty otherwise.
std::string SchemeOf(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon < 2) return "";
  for (size_t i = 0; i < colon; ++i) {
    char c = text[i];
    bool ok = std::isalpha(static_cast<unsigned char>(c)) ||
              (i > 0 && (std::isdigit(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.'));
    if (!ok) return "";
  }
  return ToLower(text.substr(0, colon));
}

struct Registry {
  std::mutex mu;
  std::map<std::string, FileSystemFactory> factories;
  Configuration config;
  std::map<std::string, std::shared_ptr<FileSystem>> instances;  // by scheme://authority
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // never destroyed: used until exit
  return *registry;
}

}  // namespace

Result<Uri> Uri::Parse(std::string_view text) {
  if (text.empty()) return Status::InvalidArgument("empty path");
  Uri uri;
  uri.scheme = SchemeOf(text);
  if (uri.scheme.empty() || uri.scheme == "file") {
    uri.scheme = "file";
    uri.path = StripFileScheme(text);
    return uri;
  }
  std::string_view rest = text.substr(uri.scheme.size() + 1);
  if (!StartsWith(rest, "//") || rest.size() == 2 || rest[2] == '/') {
    return Status::InvalidArgument("'" + std::string(text) + "' has no " +
                                   (uri.scheme == "s3" ? "bucket" : "host") + " after '" + uri.scheme + "://'")
        .WithHint(uri.scheme == "s3" ? "write s3://<bucket>/<prefix>" : "write " + uri.scheme + "://<host>:<port>/<path>");
  }
  rest.remove_prefix(2);
  size_t slash = rest.find('/');
  uri.authority = std::string(rest.substr(0, slash));
  if (slash != std::string_view::npos) {
    std::string_view p = rest.substr(slash + 1);
    while (!p.empty() && p.back() == '/') p.remove_suffix(1);
    uri.path = std::string(p);
  }
  return uri;
}

std::string Uri::ToString() const {
  if (scheme == "file") return path;
  return scheme + "://" + authority + (path.empty() ? "" : "/" + path);
}

std::string JoinPath(std::string_view base, std::string_view name) {
  std::string out(base);
  if (out.empty()) return std::string(name);
  if (out.back() != '/') out += '/';
  out += name;
  return out;
}

std::string ParentPath(std::string_view path) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  if (slash == std::string::npos) return "";
  // Keep "s3://bucket" whole rather than cutting into "s3:/".
  if (slash > 0 && p[slash - 1] == '/') return p;
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string BaseName(std::string_view path) {
  std::string p(path);
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string ToLocation(std::string_view path) {
  std::string scheme = SchemeOf(path);
  if (!scheme.empty() && scheme != "file") return std::string(path);
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(StripFileScheme(path), ec);
  return "file:" + (ec ? StripFileScheme(path) : abs.lexically_normal().string());
}

Result<bool> FileSystem::Exists(const std::string& path) {
  auto info = Stat(path);
  if (info.ok()) return true;
  if (info.status().IsNotFound()) return false;
  return info.status();
}

void RegisterFileSystem(const std::string& scheme, FileSystemFactory factory) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  r.factories[ToLower(scheme)] = std::move(factory);
  r.instances.clear();
}

void ConfigureFileSystems(const Configuration& config) {
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  r.config = config;
  r.instances.clear();
}

namespace {

Result<std::shared_ptr<FileSystem>> Make(Registry& r, const Uri& uri, const Configuration& config,
                                         const std::string& path) {
  if (uri.scheme == "file") return LocalFileSystem();
  auto it = r.factories.find(uri.scheme);
  if (it == r.factories.end()) {
    std::vector<std::string> known = {"file://"};
    for (const auto& [scheme, f] : r.factories) known.push_back(scheme + "://");
    return Status::InvalidArgument("no file system for the scheme '" + uri.scheme + "' of '" + path + "'")
        .WithHint("use a local path or one of " + Join(known, ", "));
  }
  return it->second(uri, config);
}

}  // namespace

Result<std::shared_ptr<FileSystem>> GetFileSystem(const std::string& path) {
  WEIR_ASSIGN_OR_RETURN(Uri uri, Uri::Parse(path));
  if (uri.scheme == "file") return LocalFileSystem();
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  std::string key = uri.scheme + "://" + uri.authority;
  auto it = r.instances.find(key);
  if (it != r.instances.end()) return it->second;
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> made, Make(r, uri, r.config, path));
  r.instances[key] = made;
  return made;
}

Status DeleteFilesAnywhere(const std::vector<std::string>& paths) {
  std::map<FileSystem*, std::pair<std::shared_ptr<FileSystem>, std::vector<std::string>>> by_fs;
  Status first;
  for (const auto& path : paths) {
    auto fs = GetFileSystem(path);
    if (!fs.ok()) {
      if (first.ok()) first = Status(fs.status()).WithContext("cannot delete '" + path + "'");
      continue;
    }
    auto& [owner, batch] = by_fs[fs->get()];
    owner = *fs;
    batch.push_back(path);
  }
  for (const auto& [key, files] : by_fs) {
    Status st = files.first->DeleteFiles(files.second);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

Result<std::shared_ptr<FileSystem>> OpenFileSystem(const std::string& path, const Configuration& config) {
  WEIR_ASSIGN_OR_RETURN(Uri uri, Uri::Parse(path));
  Registry& r = GetRegistry();
  std::lock_guard lock(r.mu);
  return Make(r, uri, config, path);
}

}  // namespace weir
