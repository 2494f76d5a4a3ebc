// The oneDNN CPU engine and per-thread streams shared by the oneDNN kernels.
#include "kernels/cpu/onednn.h"

namespace gradiens::kernels::cpu::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

}  // namespace gradiens::kernels::cpu::onednn
