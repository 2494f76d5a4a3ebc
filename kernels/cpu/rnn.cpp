// The CPU loops of the fused LSTM and GRU cell steps (kernels/cpu/rnn.h): the
// activations through unary_math's vectorized sigmoid and tanh, row by row.
#include "kernels/cpu/rnn.h"

#include "kernels/cpu/vector_math.h"

namespace gradiens::kernels::cpu {

template <class T>
void lstm_cell_forward(const T* gp, const T* cp, int64_t batch, int64_t hidden, T* ap, T* hp, T* cn, T* tp) {
  const int64_t H = hidden;
  for (int64_t b = 0; b < batch; ++b) {
    const T* g = gp + b * 4 * H;
    T* a = ap + b * 4 * H;
    unary_math(UnaryMath::Sigmoid, g, a, 2 * H);  // i, f
    unary_math(UnaryMath::Tanh, g + 2 * H, a + 2 * H, H);
    unary_math(UnaryMath::Sigmoid, g + 3 * H, a + 3 * H, H);
    const T* cprev = cp + b * H;
    T* crow = cn + b * H;
    for (int64_t j = 0; j < H; ++j) crow[j] = a[H + j] * cprev[j] + a[j] * a[2 * H + j];
    unary_math(UnaryMath::Tanh, crow, tp + b * H, H);
    for (int64_t j = 0; j < H; ++j) hp[b * H + j] = a[3 * H + j] * tp[b * H + j];
  }
}

template <class T>
void gru_cell_forward(const T* ip, const T* hp, const T* xp, int64_t batch, int64_t hidden, T* ap, T* out) {
  const int64_t H = hidden;
  for (int64_t b = 0; b < batch; ++b) {
    const T *x = ip + b * 3 * H, *y = hp + b * 3 * H;
    T* a = ap + b * 3 * H;
    for (int64_t j = 0; j < 2 * H; ++j) a[j] = y[j] + x[j];
    unary_math(UnaryMath::Sigmoid, a, a, 2 * H);  // r, z
    for (int64_t j = 0; j < H; ++j) a[2 * H + j] = x[2 * H + j] + y[2 * H + j] * a[j];
    unary_math(UnaryMath::Tanh, a + 2 * H, a + 2 * H, H);  // n
    for (int64_t j = 0; j < H; ++j) {
      const T n = a[2 * H + j];
      out[b * H + j] = (xp[b * H + j] - n) * a[H + j] + n;
    }
  }
}

template <class T>
void gru_cell_backward(const T* ap, const T* yp, const T* xp, const T* gp, int64_t batch, int64_t hidden, T* dip,
                       T* dhp, T* dxp) {
  const int64_t H = hidden;
  for (int64_t b = 0; b < batch; ++b) {
    const T* a = ap + b * 3 * H;
    T *di = dip + b * 3 * H, *dhh = dhp + b * 3 * H;
    for (int64_t j = 0; j < H; ++j) {
      const int64_t k = b * H + j;
      const T r = a[j], z = a[H + j], n = a[2 * H + j], gv = gp[k];
      const T dn = gv * (T(1) - z) * (T(1) - n * n);
      const T dz = gv * (xp[k] - n) * z * (T(1) - z);
      const T dr = dn * yp[b * 3 * H + 2 * H + j] * r * (T(1) - r);
      di[j] = dr;
      di[H + j] = dz;
      di[2 * H + j] = dn;
      dhh[j] = dr;
      dhh[H + j] = dz;
      dhh[2 * H + j] = dn * r;
      dxp[k] = gv * z;
    }
  }
}

template void lstm_cell_forward(const float*, const float*, int64_t, int64_t, float*, float*, float*, float*);
template void lstm_cell_forward(const double*, const double*, int64_t, int64_t, double*, double*, double*, double*);
template void gru_cell_forward(const float*, const float*, const float*, int64_t, int64_t, float*, float*);
template void gru_cell_forward(const double*, const double*, const double*, int64_t, int64_t, double*, double*);
template void gru_cell_backward(const float*, const float*, const float*, const float*, int64_t, int64_t, float*,
                                float*, float*);
template void gru_cell_backward(const double*, const double*, const double*, const double*, int64_t, int64_t,
                                double*, double*, double*);

}  // namespace gradiens::kernels::cpu
