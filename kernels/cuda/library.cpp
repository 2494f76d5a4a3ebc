// Run-time loading of the CUDA libraries (see library.h).
#include "kernels/cuda/library.h"

#include <dlfcn.h>

#include "kernels/error.h"

namespace gradiens::kernels::cuda {

void* open_library(const char* soname, const char* fallback, std::string* error) {
  void* library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) library = dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr && error != nullptr) {
    const char* text = dlerror();
    *error = text != nullptr ? text : "unknown error";
  }
  return library;  // stays loaded for the life of the process
}

void* library_symbol(void* library, const char* name, const char* library_name) {
  void* symbol = dlsym(library, name);
  GD_CHECK(symbol != nullptr, std::string(library_name) + ": the library has no " + name);
  return symbol;
}

}  // namespace gradiens::kernels::cuda
