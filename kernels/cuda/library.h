// Loading the CUDA libraries gradiens calls (cuBLAS, cuBLASLt, cuDNN,
// cuSOLVER) at run time: dlopen by soname on first use, so every binary starts
// without them and a program that never needs one never maps it.
#pragma once

#include <string>

namespace gradiens::kernels::cuda {

// The library opened by `soname`, else by `fallback` (the unversioned name);
// nullptr when neither loads, with dlerror's text in *error when given.
void* open_library(const char* soname, const char* fallback, std::string* error = nullptr);

// The address of `name` in `library`; throws gradiens::Error saying that
// `library_name` (e.g. "cuDNN") has no such symbol.
void* library_symbol(void* library, const char* name, const char* library_name);

// function = library's `name`, typed.
template <class F>
void resolve(void* library, const char* name, F& function, const char* library_name) {
  function = reinterpret_cast<F>(library_symbol(library, name, library_name));
}

}  // namespace gradiens::kernels::cuda
