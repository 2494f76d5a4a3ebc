# Writes pytorch_mlp.safetensors: the state_dict of a small PyTorch model
# (Linear, BatchNorm1d with updated running statistics, Tanh, Linear), under
# PyTorch's own names, and prints the model's eval-mode output on a fixed input
# for tests/nn/test_module_io.cpp. The file is written from the format's
# specification with json/struct only, independently of gradiens's writer.
# Needs PyTorch; the test suite itself only reads the file it produced.
import json, struct, sys
import torch

torch.manual_seed(7)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
model.train()
for _ in range(2):
    model(torch.randn(16, 4))
model.eval()

DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}
header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
for name, t in model.state_dict().items():
    raw = t.contiguous().numpy().tobytes()
    header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
    blobs.append(raw)
    offset += len(raw)
text = json.dumps(header, separators=(",", ":")).encode()
text += b" " * (-len(text) % 8)
with open(sys.argv[1] if len(sys.argv) > 1 else "pytorch_mlp.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))

x = torch.tensor([[0.5, -1.0, 2.0, 0.25], [-0.75, 0.1, 0.0, 1.5], [1.25, 2.5, -0.5, -2.0]])
with torch.no_grad():
    print("keys:", list(model.state_dict().keys()))
    print("output:", [f"{v:.9g}" for v in model(x).flatten().tolist()])
