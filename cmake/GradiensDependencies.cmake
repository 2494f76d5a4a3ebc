# Finds gradiens' dependencies, all from Debian packages: OpenMP, fmt, OpenBLAS,
# oneDNN, Google Highway, SLEEF, Random123 and nlohmann-json (both header-only).
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(fmt REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(hwy REQUIRED CONFIG)
find_package(dnnl REQUIRED CONFIG)

find_path(OPENBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas x86_64-linux-gnu/openblas-pthread REQUIRED)
find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
add_library(gradiens_openblas INTERFACE)
target_include_directories(gradiens_openblas INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(gradiens_openblas INTERFACE ${OPENBLAS_LIBRARY})

find_path(SLEEF_INCLUDE_DIR sleef.h REQUIRED)
find_library(SLEEF_LIBRARY NAMES sleef REQUIRED)
add_library(gradiens_sleef INTERFACE)
target_include_directories(gradiens_sleef INTERFACE ${SLEEF_INCLUDE_DIR})
target_link_libraries(gradiens_sleef INTERFACE ${SLEEF_LIBRARY})

find_path(RANDOM123_INCLUDE_DIR Random123/philox.h REQUIRED)

# CUDA: AUTO builds the backend when nvcc is found; ON requires it.
set(GRADIENS_HAVE_CUDA OFF)
if(NOT GRADIENS_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(GRADIENS_HAVE_CUDA ON)
  elseif(GRADIENS_CUDA STREQUAL "ON")
    message(FATAL_ERROR "GRADIENS_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "gradiens: CUDA toolkit found: ${GRADIENS_HAVE_CUDA} (the CUDA backend is not part of this version; "
               "its kernels come with a later release)")
