// print_gemm_report: JSON lines with the achieved GFLOP/s of the CPU GEMM kernels, so
// that the gap to the machine's limit is visible next to the gap to PyTorch.
#pragma once

// Times each reported product (median over repeats) with the library-wide GEMM thread
// count set to `threads`, restoring the previous count afterwards, and prints one line
// per product to stdout.
void print_gemm_report(int threads);
