"""torch-cam's Grad-CAM extractor registers a full backward hook on the
layer it explains, for DenseNet `model.features`.  DenseNet's `forward`
then rectifies that layer's output in place, `out = F.relu(features,
inplace=True)`.  With the hook installed, `features` is an output of
`BackwardHookFunction`, a view, and the in-place ReLU fails during the
forward pass ("Output 0 of BackwardHookFunctionBackward is a view and is
being modified inplace").  The fix is a non-in-place ReLU (or tensor hooks
on the output).
Buggy line: `out = F.relu(features, inplace=True)` in `DenseNet.forward`.
Expected finding: ADL025 (inplace-after-full-backward-hook).
Source: https://github.com/pytorch/vision/issues/4164"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DenseNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1, bias=False),
            nn.BatchNorm2d(4),
        )
        self.classifier = nn.Linear(4, num_classes)

    def forward(self, x):
        features = self.features(x)
        out = F.relu(features, inplace=True)  # expect: ADL025
        out = F.adaptive_avg_pool2d(out, (1, 1))
        return self.classifier(torch.flatten(out, 1))


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = None
        self.gradients = None
        target_layer.register_forward_hook(self._store_activation)
        target_layer.register_full_backward_hook(self._store_gradient)

    def _store_activation(self, module, inputs, output):
        self.activations = output.detach()

    def _store_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0].detach()

    def __call__(self, img, class_idx):
        scores = self.model(img)
        scores[:, class_idx].sum().backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations).sum(dim=1))


def run():
    torch.manual_seed(0)
    model = DenseNet().eval()
    cam = GradCAM(model, model.features)
    cam(torch.rand(1, 3, 6, 6), class_idx=1)
