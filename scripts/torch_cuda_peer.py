#!/usr/bin/env python3
"""PyTorch CUDA timings of the BENCHMARKS.md workloads that gradiens runs on a GPU.

The same shapes, dtypes and steps as gradiens-bench --device cuda (and as the
CPU peer's workloads), on the current CUDA device, with TF32 off for matmul and
cuDNN (gradiens' default, PyTorch's matmul default) and cudnn.benchmark at
PyTorch's default (off). Every timed call ends with torch.cuda.synchronize().
Prints one JSON object per line.

Usage: python3 scripts/torch_cuda_peer.py [--only NAME[,NAME]] [--repeat K]
"""
import argparse, json, math, statistics, time
import torch
import torch.nn as nn
import torch.nn.functional as F

DEV = "cuda"

def timeit(fn, warmup, repeat):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter(); fn(); torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), min(times), max(times)

def mlp(sizes, act, dtype):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(act())
    return nn.Sequential(*layers).to(dtype).to(DEV)

def pinn_burgers():
    torch.manual_seed(0)
    dt = torch.float64
    net = mlp([2] + [20] * 8 + [1], nn.Tanh, dt)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    nu = 0.01 / math.pi
    xf = (torch.rand(10000, 1, dtype=dt, device=DEV) * 2 - 1).requires_grad_()
    tf = torch.rand(10000, 1, dtype=dt, device=DEV).requires_grad_()
    xu = torch.rand(100, 2, dtype=dt, device=DEV) * 2 - 1
    uu = -torch.sin(math.pi * xu[:, :1])
    def step():
        opt.zero_grad()
        u = net(torch.cat([xf, tf], 1))
        u_x, u_t = torch.autograd.grad(u, (xf, tf), torch.ones_like(u), create_graph=True)
        u_xx, = torch.autograd.grad(u_x, xf, torch.ones_like(u_x), create_graph=True)
        f = u_t + u * u_x - nu * u_xx
        loss = ((net(xu) - uu) ** 2).mean() + (f ** 2).mean()
        loss.backward()
        opt.step()
    return step

def pinn_poisson5d():
    torch.manual_seed(0)
    dt = torch.float64
    net = mlp([5] + [64] * 8 + [1], nn.Tanh, dt)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x = torch.rand(8192, 5, dtype=dt, device=DEV).requires_grad_()
    f = (math.pi ** 2 / 4) * torch.sin(math.pi / 2 * x.detach()).sum(1, keepdim=True)
    def step():
        opt.zero_grad()
        u = net(x)
        g, = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)
        lap = torch.zeros_like(u)
        for i in range(5):
            lap = lap + torch.autograd.grad(g[:, i].sum(), x, create_graph=True)[0][:, i:i + 1]
        loss = ((lap + f) ** 2).mean()
        loss.backward()
        opt.step()
    return step

def op_overhead(n=5000):
    x0 = torch.ones(1, dtype=torch.float64, device=DEV, requires_grad=True)
    def step():
        x = x0
        for _ in range(n):
            x = x * 1.0001 + 0.0001
        x.sum().backward()
    return step

def mlp_train(steps=50):
    torch.manual_seed(0)
    net = mlp([784, 512, 256, 10], nn.ReLU, torch.float32)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    xs = torch.randn(steps, 128, 784, device=DEV); ys = torch.randint(0, 10, (steps, 128), device=DEV)
    def step():
        for i in range(steps):
            opt.zero_grad()
            F.cross_entropy(net(xs[i]), ys[i]).backward(); opt.step()
    return step

# BENCHMARKS.md's cnn_f32_20steps, as the CPU peer builds it: the data is drawn
# on the CPU (the same numbers as the CPU peer's) and moved to the device once.
def cnn_train(steps=20):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(1600, 128), nn.ReLU(), nn.Linear(128, 10)).to(DEV)
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    xs = torch.randn(steps, 128, 1, 28, 28).to(DEV); ys = torch.randint(0, 10, (steps, 128)).to(DEV)
    def step():
        for i in range(steps):
            opt.zero_grad()
            F.cross_entropy(net(xs[i]), ys[i]).backward(); opt.step()
    return step

# BENCHMARKS.md's lstm_packed_f32, as the CPU peer builds it: the sequences are
# drawn on the CPU (the CPU peer's numbers) and moved to the device once; the
# packing runs in the timed call, as there.
def lstm_packed():
    torch.manual_seed(0)
    lstm = nn.LSTM(32, 128, batch_first=True).to(DEV)
    g = torch.Generator().manual_seed(0)
    lens = torch.randint(10, 101, (64,), generator=g)
    seqs = [torch.randn(int(l), 32, generator=g).to(DEV) for l in lens]
    def step():
        packed = nn.utils.rnn.pack_sequence(seqs, enforce_sorted=False)
        out, (h, c) = lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        (padded.sum() + h.sum()).backward()
    return step

# BENCHMARKS.md's phm_linear_f32: W = sum_i kron(A_i, S_i), then the linear layer.
def phm_linear(n=4, d=512, batch=256):
    torch.manual_seed(0)
    A = torch.randn(n, n, n).to(DEV).requires_grad_()
    S = torch.randn(n, d // n, d // n).to(DEV).requires_grad_()
    b = torch.zeros(d).to(DEV).requires_grad_()
    x = torch.randn(batch, d).to(DEV)
    def step():
        W = sum(torch.kron(A[i], S[i]) for i in range(n))
        F.linear(x, W, b).square().mean().backward()
    return step

WORKLOADS = {
    "pinn_burgers_f64": (pinn_burgers, 3, 20, "one Adam step, N_f=10000"),
    "pinn_poisson5d_f64": (pinn_poisson5d, 3, 20, "one Adam step, 8192 points, full 5-D Laplacian"),
    "op_overhead_5000": (op_overhead, 2, 10, "5000 x (mul, add) + backward"),
    "mlp_f32_50steps": (mlp_train, 1, 5, "50 steps, batch 128"),
    "cnn_f32_20steps": (cnn_train, 1, 3, "20 steps, batch 128"),
    "lstm_packed_f32": (lstm_packed, 2, 10, "fwd+bwd, 64 seqs len 10..100"),
    "phm_linear_f32": (phm_linear, 3, 20, "fwd+bwd, n=4, 512x512, batch 256"),
}

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="")
    ap.add_argument("--repeat", type=int, default=0)
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    names = list(dict.fromkeys(a.only.split(","))) if a.only else list(WORKLOADS)
    for name in names:
        make, warm, rep, what = WORKLOADS[name]
        torch.cuda.reset_peak_memory_stats()
        med, lo, hi = timeit(make(), warm, a.repeat or rep)
        print(json.dumps({"workload": name, "impl": "pytorch-python " + torch.__version__,
                          "device": "cuda:0 (" + torch.cuda.get_device_name() + ")",
                          "median_ms": round(med, 3), "min_ms": round(lo, 3), "max_ms": round(hi, 3),
                          "max_memory_allocated_mb": round(torch.cuda.max_memory_allocated() / 2**20, 1),
                          "what": what}), flush=True)
