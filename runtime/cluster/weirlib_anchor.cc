// libweir.so is made of whole static archives; this file gives the target a source
// of its own and records the library's version.
extern "C" const char* weir_library_version() { return WEIR_VERSION; }
