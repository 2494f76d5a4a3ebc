// nn::functional::phm_linear: the product of the parameterized hypercomplex
// multiplication (PHM) layer, y = x W^T + b with W = sum_i kron(A_i, S_i).
#pragma once

#include <cstdint>

#include "engine/tensor.h"

namespace gradiens::nn::functional {

// Shape legend: n = the hypercomplex dimension, p = in / n, q = out / n,
// R = the rows of the input (the product of its leading dims).
//   A [n, n, n]: A_i = A[i], n x n     S [n, q, p]: S_i = S[i], q x p
//   W [out, in] = sum_i kron(A_i, S_i), i.e. W[a*q + d, b*p + e] = sum_i A[i,a,b] S[i,d,e]
//
// Note [PHM path choice]
// Two ways give the same y (up to rounding):
//  * BuildWeight: W from one [n*n, n] x [n, q*p] GEMM and a move of its q x p
//    blocks into place, then y = x W^T + b, one [R, in] x [in, out] GEMM.
//  * Structured: no W. Z = x S^T blockwise, one [R*n, p] x [p, n*q] GEMM (x_b S_i^T
//    for every block b of x and every i), then y_a = sum_{i,b} A[i,a,b] Z_{b,i},
//    R small [n, n*n] x [n*n, q] GEMMs.
// Both main GEMMs cost R in out multiply-adds, and so do the backward ones: a
// sum of n Kronecker products saves parameters, not multiplications (per row,
// sum_i S_i X A_i^T with X the p x n reshaped row is n^2 p q = in out). So the
// paths differ only around the main GEMMs: building W and its gradient costs
// about n in out multiply-adds (GEMMs with an inner size of n, well below
// peak) plus two moves of in out elements, whatever R is; the structured
// mixing costs n^2 out per row plus the calls of its small GEMMs (3 per row
// with backward), which weigh about 1100 multiply-adds each row.
// Measured on 13 shapes (n from 2 to 16, in and out from 20 to 1024, R from 1
// to 1024; float32, 1 thread, forward + backward), the structured path is the
// faster one up to R (n^2 out + 1100) = 4/3 n in out (within a factor 1.5
// of the measured crossing), and forward alone up to twice that; on layers
// with in out < 16384 building W is cheap and the structured path's extra ops
// lose from R = 2. Auto follows exactly this rule (phm_choose_path): e.g. for
// n = 4, 512 -> 512 the structured path up to R = 150 with gradients and 300
// without; the benchmark's R = 256 training step builds W (2.66 ms against
// 2.87 ms structured).
enum class PHMPath { Auto, BuildWeight, Structured };

// The path Auto takes for `rows` input rows; `needs_grad` says whether a
// backward will follow (grad mode on and some argument requires grad).
PHMPath phm_choose_path(int64_t rows, int64_t n, int64_t in_features, int64_t out_features, bool needs_grad);

// W = sum_i kron(A[i], S[i]) as one [n*q, n*p] tensor, differentiable (any order).
Tensor phm_weight(const Tensor& A, const Tensor& S);

// y = input W^T + bias for input [..., in] (any leading shape, or 1-D [in]);
// bias [out] or undefined. Differentiable in every argument, at any order, on
// either path. Errors name the shapes: A must be [n, n, n], S [n, q, p], the
// input's last dim n * p, bias [n * q], all of one dtype.
Tensor phm_linear(const Tensor& input, const Tensor& A, const Tensor& S, const Tensor& bias = {},
                  PHMPath path = PHMPath::Auto);

}  // namespace gradiens::nn::functional
