"""How_to_write_cuda_extensions_in_pytorch (sonack), issue "How to write backward function in
RoundFunction?": a custom `autograd.Function` `RoundFunction` (rounding forward, straight-through
backward) is checked with `x = torch.randn(2, 2, requires_grad=True); x = x.cuda();
y = roundFunc(x); y.backward(torch.ones_like(y)); print(x.grad)`, which prints `None`. The
answer: "because you write `x = x.cuda()`, then x became a non-leaf node which will not preserve
grad". Re-created (CPU) with the Function, a check of its straight-through gradient that reads
`x.grad`; the copy comes from a dtype change in the `.to(...)` that stands for `.cuda()`.
Buggy line: `x = x.to(device=device, dtype=torch.float64)` (re-binds the leaf to a copy).
Source: https://github.com/sonack/How_to_write_cuda_extensions_in_pytorch/issues/2"""
import torch
from torch.autograd import Function


class RoundFunction(Function):
    @staticmethod
    def forward(ctx, x):
        return torch.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        grad_in = torch.zeros_like(grad_output)
        grad_in.copy_(grad_output)  # straight-through
        return grad_in


round_func = RoundFunction.apply


def check_straight_through(device="cpu"):
    torch.manual_seed(0)
    x = torch.randn(2, 2, requires_grad=True)
    x = x.to(device=device, dtype=torch.float64)  # x is now a non-leaf copy; its .grad is never filled (ADL020 reports the read below)
    y = round_func(x)
    y.backward(torch.ones_like(y))
    assert torch.allclose(x.grad, torch.ones_like(y)), "straight-through gradient is not one"  # expect: ADL020


run = check_straight_through


if __name__ == "__main__":
    check_straight_through()
