"""Captum's `LayerActivation` records a layer's activation with a forward hook that keeps the
layer's output tensor itself. In a network whose next module is `nn.ReLU(inplace=True)`, that
ReLU overwrites the very tensor the hook kept, so the "activation of the first convolution"
Captum returns is the ReLU of it: comparing it with `model[0](input)` gives a norm of about 3.5
instead of 0, and the negative pre-activations are lost. Nothing fails. The fix (Captum PR 165)
keeps a clone of the layer's output in the hook.
Source: https://github.com/pytorch/captum/issues/156 (fix: https://github.com/pytorch/captum/pull/165)
expect: silent"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(23)
np.random.seed(23)


class LayerActivation:
    """Activations of `layer` for the inputs given to `attribute`."""

    def __init__(self, forward_func, layer):
        self.forward_func = forward_func
        self.layer = layer

    def _forward_layer_eval(self, inputs):
        saved_layer = {}

        def forward_hook(module, inp, out):
            saved_layer["output"] = out.clone()

        hook = self.layer.register_forward_hook(forward_hook)
        try:
            with torch.no_grad():
                self.forward_func(inputs)
        finally:
            hook.remove()
        return saved_layer["output"]

    def attribute(self, inputs):
        return self._forward_layer_eval(inputs)


model = nn.Sequential(
    nn.Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)),
    nn.ReLU(inplace=True),
    nn.Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1)),
    nn.ReLU(inplace=True),
)

layer_act = LayerActivation(model, model[0])
input = torch.randn(1, 3, 5, 5)
mylayer = model[0]
with torch.no_grad():
    expected = mylayer(input)
activation = layer_act.attribute(input)
difference = torch.norm(expected - activation, p=2)
print(difference)

result = {"activation": activation, "difference": difference.reshape(1)}
