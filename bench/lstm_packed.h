// lstm_packed_f32 of BENCHMARKS.md: the workload as a callable, for gradiens-bench to time.
#pragma once

#include <functional>

#include "engine/device.h"

// Builds LSTM(32 -> 128) and 64 float32 sequences of the peer's lengths (10..100)
// on `device` and returns one timed call: pack_sequence(enforce_sorted=false),
// forward, pad_packed_sequence(batch_first), backward of padded.sum() + h_n.sum()
// (the call does not wait for a GPU: the caller synchronizes).
std::function<void()> make_lstm_packed_f32_step(const gradiens::Device& device);
// The multiply-adds x 2 of one call's GEMMs (forward, weight and input
// gradients), for a GFLOP/s figure.
double lstm_packed_f32_flops();
