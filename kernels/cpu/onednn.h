// oneDNN plumbing shared by the GEMM and convolution kernels: the CPU engine,
// one stream per thread, and per-thread scratchpad buffers.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>
#include <omp.h>

#include <cstddef>
#include <memory>
#include <new>

namespace gradiens::kernels::cpu::onednn {

const dnnl::engine& cpu_engine();
dnnl::stream& thread_stream();

// Scratchpads are ours (scratchpad_mode::user) so that no two threads ever
// share scratch memory: one growing 64-byte-aligned buffer per thread and per
// `Owner` tag, so the GEMM and convolution kernels never share one either.
template <class Owner>
void* thread_scratchpad(size_t bytes) {
  struct AlignedDelete {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  thread_local std::unique_ptr<std::byte[], AlignedDelete> buffer;
  thread_local size_t capacity = 0;
  if (bytes > capacity) {
    buffer.reset(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(64))));
    capacity = bytes;
  }
  return buffer.get();
}

// oneDNN's threads come from OpenMP, read when a primitive is created and run;
// this sets the calling thread's OpenMP count for one call and puts it back.
class OmpThreadsScope {
 public:
  explicit OmpThreadsScope(int threads) : saved_(omp_get_max_threads()) {
    if (saved_ != threads) omp_set_num_threads(threads);
  }
  ~OmpThreadsScope() {
    if (omp_get_max_threads() != saved_) omp_set_num_threads(saved_);
  }
  OmpThreadsScope(const OmpThreadsScope&) = delete;
  OmpThreadsScope& operator=(const OmpThreadsScope&) = delete;

 private:
  int saved_;
};

}  // namespace gradiens::kernels::cpu::onednn
