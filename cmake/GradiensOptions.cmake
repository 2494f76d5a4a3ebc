# Warning and sanitizer flags shared by every gradiens target.
add_library(gradiens_warnings INTERFACE)
target_compile_options(gradiens_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)

if(GRADIENS_SANITIZE)
  message(STATUS "gradiens: building with -fsanitize=${GRADIENS_SANITIZE}")
  # C++ only: nvcc takes none of these (the CUDA kernels are not instrumented).
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${GRADIENS_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${GRADIENS_SANITIZE})
endif()
