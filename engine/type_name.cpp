// demangled_type_name, through the C++ ABI's demangler.
#include "engine/type_name.h"

#include <cxxabi.h>

#include <cstdlib>

namespace gradiens {

std::string demangled_type_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  return name;
}

}  // namespace gradiens
