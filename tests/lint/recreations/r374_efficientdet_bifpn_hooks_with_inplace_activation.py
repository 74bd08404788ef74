"""A user of efficientdet-pytorch plots per-layer gradients of the BiFPN by
registering a full backward hook on every leaf module of the model's `fpn`.
Each BiFPN node combines its inputs with learned weights and then runs
`after_combine`, an `nn.Sequential` that starts with an activation built
with `inplace=True` (`act_layer(inplace=True)`, ReLU6 here) and continues
with a convolution.  A full backward hook wraps the module's inputs and
outputs in `BackwardHookFunction` views; the hooked in-place activation then
writes such a view, and the forward fails ("Output 0 of
BackwardHookFunctionBackward is a view and is being modified inplace").
The fix builds the activation with `inplace=False` (or hooks tensors).
Buggy line: `nn.ReLU6(inplace=True)` in `FNode.__init__`, behind the hooks
of `GradientPlotter`.
Source: https://github.com/rwightman/efficientdet-pytorch/issues/298"""
import torch
import torch.nn as nn


class FpnCombine(nn.Module):
    def __init__(self, num_inputs):
        super().__init__()
        self.edge_weights = nn.Parameter(torch.ones(num_inputs))

    def forward(self, features):
        weights = torch.relu(self.edge_weights)
        weights = weights / (weights.sum() + 1e-4)
        return sum(w * f for w, f in zip(weights, features))


class FNode(nn.Module):
    def __init__(self, num_inputs, channels):
        super().__init__()
        self.combine = FpnCombine(num_inputs)
        self.after_combine = nn.Sequential(
            nn.ReLU6(inplace=True),  # expect: ADL025
            nn.Conv2d(channels, channels, 3, padding=1),
        )

    def forward(self, features):
        return self.after_combine(self.combine(features))


class BiFpnLayer(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.fnode = nn.ModuleList([FNode(2, channels), FNode(2, channels)])

    def forward(self, x):
        x = list(x)
        x.append(self.fnode[0]([x[0], x[1]]))
        x.append(self.fnode[1]([x[1], x[-1]]))
        return x[-2:]


class EfficientDetLike(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.backbone = nn.Conv2d(3, channels, 3, padding=1)
        self.fpn = BiFpnLayer(channels)
        self.head = nn.Conv2d(channels, 1, 1)

    def forward(self, images):
        feat = self.backbone(images)
        outs = self.fpn([feat, feat * 0.5])
        return sum(self.head(o).mean() for o in outs)


class GradientPlotter:
    def __init__(self, module):
        self.grads = {}
        for name, layer in module.named_modules():
            if len(list(layer.children())) == 0:
                layer.register_full_backward_hook(self._saver(name))

    def _saver(self, name):
        def hook(module, grad_input, grad_output):
            self.grads[name] = grad_output[0].norm().item()
        return hook


def run():
    torch.manual_seed(0)
    model = EfficientDetLike()
    plotter = GradientPlotter(model.fpn)
    model(torch.randn(1, 3, 8, 8)).backward()
    return plotter.grads
