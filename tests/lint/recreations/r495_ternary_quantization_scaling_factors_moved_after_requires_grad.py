"""ternary-quantization's training script creates one pair of scaling factors
per quantised layer as `torch.ones(2, requires_grad=True).to(device)` and
hands them to the optimizer: `.to` returns a copy produced by an autograd
op, a non-leaf tensor, and `optim.Adam(scaling_factors)` raises "can't
optimize a non-leaf Tensor" (had it been accepted, its `.grad` would stay
None).  On the reporter's GPU the copy came from the device move; on a CPU
machine the re-creation's `.to` also converts to the model's dtype, which
gives the same non-leaf copy.  The fix creates them in place:
`torch.ones(2, requires_grad=True, device=device)`.
Buggy line: the list comprehension building `scaling_factors`.
Source: https://github.com/vinsis/ternary-quantization/issues/4"""
import torch
import torch.nn as nn


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 6)
        self.fc2 = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def quantize(kernel, w_p, w_n, t=0.05):
    delta = t * kernel.abs().max()
    a = (kernel > delta).to(kernel.dtype)
    b = (kernel < -delta).to(kernel.dtype)
    return w_p * a - w_n * b


def build_optimizers(model, device, dtype):
    weights_to_be_quantized = [p for n, p in model.named_parameters() if "weight" in n]
    scaling_factors = [torch.ones(2, requires_grad=True).to(device=device, dtype=dtype) for _ in range(len(weights_to_be_quantized))]  # missed: ADL020
    optimizer_main = torch.optim.Adam(model.parameters(), lr=1e-3)
    optimizer_sf = torch.optim.Adam(scaling_factors, lr=1e-4)
    return weights_to_be_quantized, scaling_factors, optimizer_main, optimizer_sf


def run():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = LeNet().to(device=device, dtype=torch.float64)
    build_optimizers(model, device, torch.float64)
