"""SINGD, a structured second-order optimizer, installs full backward hooks
on the layers it preconditions (`register_full_backward_hook`, to read each
layer's output gradient).  A full backward hook wraps the module's outputs in
a `BackwardHookFunction` whose outputs are views; a model whose next layer is
`nn.ReLU(inplace=True)` writes that view in place, and the forward pass fails
("Output 0 of BackwardHookFunctionBackward is a view and is being modified
inplace").  The fix is non-in-place activations (or tensor hooks on the
output, registered from a forward hook).
Buggy line: `nn.ReLU(inplace=True)` in `make_model`, behind a hooked
convolution.
Expected finding: ADL025 (inplace-after-full-backward-hook).
Source: https://github.com/f-dangel/singd/issues/56"""
import torch
import torch.nn as nn


class KFACStyleOptimizer(torch.optim.SGD):
    """Collects each supported layer's output gradient with full backward
    hooks, as SINGD does, before stepping."""

    def __init__(self, model, lr=0.1):
        super().__init__(model.parameters(), lr=lr)
        self.output_grads = {}
        self.handles = []
        for name, module in model.named_modules():
            if isinstance(module, (nn.Conv2d, nn.Linear)):
                self.handles.append(module.register_full_backward_hook(self._make_hook(name)))

    def _make_hook(self, name):
        def save_output_grad(module, grad_input, grad_output):
            self.output_grads[name] = grad_output[0].detach()
        return save_output_grad


def make_model():
    return nn.Sequential(
        nn.Conv2d(1, 2, 3),
        nn.ReLU(inplace=True),  # expect: ADL025
        nn.Flatten(),
        nn.Linear(18, 2),
    )


def run():
    torch.manual_seed(0)
    model = make_model()
    optimizer = KFACStyleOptimizer(model)
    x = torch.rand(2, 1, 5, 5)
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
