// The C++ name of a type as libtorch's messages print it ("int", "float",
// "gradiens::nn::LinearImpl"): the demangled typeid name.
#pragma once

#include <string>
#include <typeinfo>

namespace gradiens {

std::string demangled_type_name(const std::type_info& type);

}  // namespace gradiens
