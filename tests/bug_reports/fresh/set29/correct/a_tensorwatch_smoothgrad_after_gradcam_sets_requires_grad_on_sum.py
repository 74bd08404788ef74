"""TensorWatch's saliency module, called as in its `cnn_pred_explain` notebook with two methods:
`get_image_saliency_results(model, img, input_tensor, label, methods=['gradcam', 'smooth_grad'])`.
Both methods are run on the same `input_tensor`. Grad-CAM's `_backprop` sets
`inp.requires_grad = True` on it (a leaf, so that is allowed), and the flag stays. SmoothGrad then
builds `noisy_inp = inp + noise`, which now carries a graph (an AddBackward0 node, not a leaf), and
hands it to the same `_backprop`, whose `inp.requires_grad = True` fails with "you can only change
requires_grad flags of leaf variables". Each method alone runs. The fix: give the base explainer
a fresh leaf, `noisy_inp = (inp + noise).detach()`, as the SmoothGrad reference implementation
does (its noisy inputs are new inputs, not functions of the image).
Source: https://github.com/microsoft/tensorwatch/issues/25
expect: raises"""
import warnings

import torch
import torch.nn as nn

warnings.filterwarnings("ignore", category=FutureWarning)
torch.manual_seed(0)


class ResNet(nn.Module):
    """A small stand-in with the layer name TensorWatch looks up for ResNets (`avgpool`)."""

    def __init__(self, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.avgpool = nn.AdaptiveAvgPool2d(2)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        return self.fc(self.avgpool(self.features(x)).flatten(1))


class VanillaGradExplainer(object):
    def __init__(self, model):
        self.model = model

    def _backprop(self, inp, ind):
        inp.requires_grad = True
        if inp.grad is not None:
            inp.grad.zero_()
        self.model.eval()
        self.model.zero_grad()
        output = self.model(inp)
        if ind is None:
            ind = output.max(1)[1]
        grad_out = output.clone()
        grad_out.fill_(0.0)
        grad_out.scatter_(1, ind.unsqueeze(0).t(), 1.0)
        output.backward(grad_out)
        return inp.grad

    def explain(self, inp, ind=None, raw_inp=None):
        return self._backprop(inp, ind)


class GradCAMExplainer(VanillaGradExplainer):
    def __init__(self, model, target_layer):
        super(GradCAMExplainer, self).__init__(model)
        self.intermediate_act, self.intermediate_grad = [], []

        def forward_hook_output(m, i, o):
            self.intermediate_act.append(o.data.clone())

        def backward_hook(m, grad_i, grad_o):
            self.intermediate_grad.append(grad_o[0].data.clone())

        self.handle_forward_hook = target_layer.register_forward_hook(forward_hook_output)
        self.handle_backward_hook = target_layer.register_full_backward_hook(backward_hook)

    def explain(self, inp, ind=None, raw_inp=None):
        _ = super(GradCAMExplainer, self)._backprop(inp, ind)
        self.handle_forward_hook.remove()
        self.handle_backward_hook.remove()
        grad, act = self.intermediate_grad[0], self.intermediate_act[0]
        weights = grad.sum(-1).sum(-1).unsqueeze(-1).unsqueeze(-1)
        cam = (weights * act).sum(1).unsqueeze(1)
        return torch.clamp(cam, min=0)


class SmoothGradExplainer(object):
    def __init__(self, model, stdev_spread=0.15, nsamples=8, magnitude=True):
        self.base_explainer = VanillaGradExplainer(model)
        self.stdev_spread = stdev_spread
        self.nsamples = nsamples
        self.magnitude = magnitude

    def explain(self, inp, ind=None, raw_inp=None):
        stdev = self.stdev_spread * (inp.max() - inp.min())
        total_gradients = 0
        for i in range(self.nsamples):
            noise = torch.randn_like(inp) * stdev
            noisy_inp = (inp + noise).detach()
            grad = self.base_explainer.explain(noisy_inp, ind)
            if self.magnitude:
                total_gradients += grad ** 2
            else:
                total_gradients += grad
        return total_gradients / self.nsamples


def get_saliency(model, raw_input, input, label, method):
    if input.grad is not None:
        input.grad.zero_()
    model.eval()
    model.zero_grad()
    exp = GradCAMExplainer(model, model.avgpool) if method == "gradcam" else SmoothGradExplainer(model)
    saliency = exp.explain(input, label, raw_input)
    saliency = saliency.abs().sum(dim=1)[0].squeeze()
    saliency -= saliency.min()
    saliency /= (saliency.max() + 1e-20)
    return saliency.detach()


def get_image_saliency_results(model, raw_image, input, label, methods):
    return [get_saliency(model, raw_image, input, label, method) for method in methods]


model = ResNet()
img = torch.rand(3, 16, 16)
input_tensor = ((img - 0.5) / 0.25).unsqueeze(0)
prediction_tensor = torch.tensor([2])
results = get_image_saliency_results(model, img, input_tensor, prediction_tensor, methods=["gradcam", "smooth_grad"])
result = {"gradcam": results[0], "smooth_grad": results[1]}
