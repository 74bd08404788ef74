"""Grad-CAM on a trained classifier, run inside `torch.no_grad()` as for inference: the CAM's
forward hook registers a gradient hook on the target layer's output, which does not require grad
there.
Source: https://github.com/frgfm/torch-cam/issues/217 ("cannot register a hook on a tensor that
doesn't require gradient" when calling the extractor under `with torch.no_grad():`; answer:
gradient-based CAMs need gradients, so do not run the forward pass under no_grad).
expect: raises"""
import torch
import torch.nn as nn


class GradCAM:
    def __init__(self, model, target_layer):
        self.activations = None
        self.gradients = None
        target_layer.register_forward_hook(self._keep_activations)

    def _keep_activations(self, module, inputs, output):
        self.activations = output
        output.register_hook(self._keep_gradients)

    def _keep_gradients(self, grad):
        self.gradients = grad

    def __call__(self, class_idx, scores):
        scores[:, class_idx].sum().backward()
        weights = self.gradients.mean((2, 3), keepdim=True)
        return torch.relu((weights * self.activations).sum(1)).detach()


torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 5),
).eval()
cam_extractor = GradCAM(model, target_layer=model[2])
images = torch.randn(2, 3, 8, 8)

scores = model(images)
heatmap = cam_extractor(class_idx=1, scores=scores)
result = {"scores": scores.detach(), "heatmap": heatmap}
