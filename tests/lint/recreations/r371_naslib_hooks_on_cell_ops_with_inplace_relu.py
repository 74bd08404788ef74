"""NASLib's search cells build each candidate operation as `ReLUConvBN`, an
`nn.Sequential` that starts with `nn.ReLU(inplace=True)`.  A zero-cost
proxy that registers full backward hooks on every operation of the cell
(to read each op's output gradient) makes the hooked op's output a
`BackwardHookFunction` view; the next op's in-place ReLU writes that view,
and the forward pass fails ("Output 0 of BackwardHookFunctionBackward is a
view and is being modified inplace").  The issue asks for an option to turn
the in-place ReLU off.
Buggy line: `nn.ReLU(inplace=True)` in `ReLUConvBN.__init__`, behind a
hooked op.
Expected finding: ADL025 (inplace-after-full-backward-hook).
Source: https://github.com/automl/NASLib/issues/113"""
import torch
import torch.nn as nn


class ReLUConvBN(nn.Module):
    def __init__(self, C_in, C_out, kernel_size=3):
        super().__init__()
        self.op = nn.Sequential(
            nn.ReLU(inplace=True),  # expect: ADL025
            nn.Conv2d(C_in, C_out, kernel_size, padding=kernel_size // 2, bias=False),
            nn.BatchNorm2d(C_out),
        )

    def forward(self, x):
        return self.op(x)


class Cell(nn.Module):
    def __init__(self, C):
        super().__init__()
        self.ops = nn.ModuleList([ReLUConvBN(C, C), ReLUConvBN(C, C, 1)])

    def forward(self, x):
        for op in self.ops:
            x = op(x)
        return x


class GradNormProxy:
    """Scores a cell by the output gradients of its operations."""

    def __init__(self, cell):
        self.grad_norms = {}
        for i, op in enumerate(cell.ops):
            op.register_full_backward_hook(self._make_hook(i))

    def _make_hook(self, i):
        def hook(module, grad_input, grad_output):
            self.grad_norms[i] = grad_output[0].norm().item()
        return hook


def run():
    torch.manual_seed(0)
    cell = Cell(3)
    proxy = GradNormProxy(cell)
    x = torch.randn(2, 3, 4, 4).relu()
    cell(x).sum().backward()
    return proxy.grad_norms
