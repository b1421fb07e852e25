#pragma once
// TempDir: a fresh directory under the system's temporary directory, removed with its
// contents when the object goes away.
//
//   TempDir tmp;
//   tmp.path();                     // the directory (std::filesystem::path)
//   tmp / "out";                    // a path inside it, as a string
//   tmp.Write("conf.yaml", "...");  // writes a file inside it, returns its path

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace weir::testing {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "weir-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a directory like " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = *this / name;
    std::ofstream(p) << content;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace weir::testing
