#!/usr/bin/env python3
# The PyTorch twin of fashion_mnist.cpp: the same MLP and CNN, optimizer, batch
# size, epochs and recipe (normalized inputs, Adam, cosine-annealed learning
# rate stepped per batch), on the same IDX files read with gzip and numpy.
import argparse
import gzip
import json
import os
import struct
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def read_idx(path):
    """An IDX file as a numpy array (unsigned-byte files only: all Fashion-MNIST needs)."""
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype, ndims = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        raise ValueError(f"{path}: not an unsigned-byte IDX file")
    dims = struct.unpack(f">{ndims}I", data[4 : 4 + 4 * ndims])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * ndims).reshape(dims)


def find(root, name):
    for candidate in (os.path.join(root, name), os.path.join(root, name + ".gz")):
        if os.path.exists(candidate):
            return candidate
    raise FileNotFoundError(f"cannot find {name}[.gz] in {root}")


def load(root, train):
    prefix = "train" if train else "t10k"
    images = read_idx(find(root, f"{prefix}-images-idx3-ubyte"))
    labels = read_idx(find(root, f"{prefix}-labels-idx1-ubyte"))
    # As ToTensor: float32 in [0, 1], one channel.
    x = torch.from_numpy(images.copy()).float().div(255).unsqueeze(1)
    return x, torch.from_numpy(labels.astype(np.int64))


MEAN, STD = 0.2860, 0.3530  # of the training images, as torchvision's Normalize takes them


def make_model(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                             nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def accuracy(model, x, y):
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(x), 1000):
            correct += (model((x[start : start + 1000] - MEAN) / STD).argmax(1) == y[start : start + 1000]).sum().item()
    model.train()
    return correct / len(x)


def main():
    parser = argparse.ArgumentParser(description="Fashion-MNIST MLP and CNN in PyTorch")
    parser.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", default="/usr/share/datasets/fashion-mnist")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    train_x, train_y = load(args.root, True)
    test_x, test_y = load(args.root, False)
    results = {}
    for kind in (["mlp", "cnn"] if args.model == "both" else [args.model]):
        torch.manual_seed(args.seed)
        model = make_model(kind)
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
        loader = DataLoader(TensorDataset(train_x, train_y), batch_size=args.batch_size, shuffle=True,
                            num_workers=args.workers, generator=torch.Generator().manual_seed(args.seed))
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs * len(loader))
        epochs = []
        for epoch in range(1, args.epochs + 1):
            start = time.perf_counter()
            total, count = 0.0, 0
            for x, y in loader:
                optimizer.zero_grad()
                loss = nn.functional.cross_entropy(model((x - MEAN) / STD), y)
                loss.backward()
                optimizer.step()
                scheduler.step()
                total += loss.item() * len(y)
                count += len(y)
            seconds = time.perf_counter() - start
            acc = accuracy(model, test_x, test_y)
            print(f"{kind} epoch {epoch}: train loss {total / count:.4f}, test accuracy {100 * acc:.2f}%, "
                  f"epoch time {seconds:.2f} s", flush=True)
            epochs.append({"epoch": epoch, "loss": total / count, "test_accuracy": acc, "seconds": seconds})
        results[kind] = epochs
    print(json.dumps({"example": "fashion_mnist_torch", "threads": args.threads, "workers": args.workers,
                      "batch_size": args.batch_size, "results": results}))


if __name__ == "__main__":
    main()
