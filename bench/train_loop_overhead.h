// train_loop_overhead of BENCHMARKS.md: one epoch of configs/fashion_mnist_mlp.json
// through gradiens-train's trainer against the same loop written by hand.
#pragma once

// Runs both `repeat` times, alternating, and prints one JSON line with the
// trainer's median epoch time and its ratio to the hand-written loop's.
void train_loop_overhead(int threads, int repeat, const char* version);
