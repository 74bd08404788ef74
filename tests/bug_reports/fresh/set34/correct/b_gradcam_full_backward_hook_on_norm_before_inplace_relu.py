"""pytorch-grad-cam's `ActivationsAndGradients` records the target layer's output with a forward
hook and its gradient with `register_full_backward_hook`. On an mmcls-style backbone built from
conv-norm-act modules whose activation is `nn.ReLU(inplace=True)`, the target layer (the last
norm) hands its output to the in-place ReLU; the full backward hook has wrapped that output in
`BackwardHookFunction`, so the forward pass fails with "Output 0 of BackwardHookFunctionBackward is
a view and is being modified inplace". The fix (PR 183, by mmclassification's developer) records
the gradient with a tensor hook registered on the output from the forward hook instead.
Source: https://github.com/jacobgil/pytorch-grad-cam/pull/183 (see also
https://github.com/pytorch/pytorch/issues/61519)
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ConvModule(nn.Module):
    def __init__(self, in_ch, out_ch, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)
        self.activate = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class ImageClassifier(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.backbone = nn.Sequential(ConvModule(3, 8), ConvModule(8, 16, stride=2), ConvModule(16, 16))
        self.head = nn.Linear(16, num_classes)

    def forward(self, img):
        feats = self.backbone(img)
        return self.head(F.adaptive_avg_pool2d(feats, 1).flatten(1))


class ActivationsAndGradients:
    """Class for extracting activations and registering gradients from targeted intermediate layers."""

    def __init__(self, model, target_layers):
        self.model = model
        self.gradients = []
        self.activations = []
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(target_layer.register_forward_hook(self.save_activation))
            self.handles.append(target_layer.register_forward_hook(self.save_gradient))

    def save_activation(self, module, input, output):
        self.activations.append(output.clone().detach())

    def save_gradient(self, module, input, output):
        if not hasattr(output, "requires_grad") or not output.requires_grad:
            return

        # Gradients are computed in reverse order
        def _store_grad(grad):
            self.gradients = [grad.detach()] + self.gradients

        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()


class GradCAM:
    def __init__(self, model, target_layers):
        self.model = model.eval()
        self.activations_and_grads = ActivationsAndGradients(model, target_layers)

    def __call__(self, input_tensor, target_category):
        output = self.activations_and_grads(input_tensor)
        self.model.zero_grad()
        loss = output[torch.arange(len(target_category)), target_category].sum()
        loss.backward(retain_graph=True)
        activations = self.activations_and_grads.activations[0]
        grads = self.activations_and_grads.gradients[0]
        weights = grads.mean(dim=(2, 3), keepdim=True)
        cam = torch.relu((weights * activations).sum(dim=1))
        cam = cam - cam.amin(dim=(1, 2), keepdim=True)
        return cam / (cam.amax(dim=(1, 2), keepdim=True) + 1e-7), grads


model = ImageClassifier()
target_layers = [model.backbone[-1].bn]
cam = GradCAM(model=model, target_layers=target_layers)
images = torch.randn(2, 3, 16, 16)
grayscale_cam, grads = cam(images, target_category=torch.tensor([1, 3]))
cam.activations_and_grads.release()

result = {"cam": grayscale_cam, "grads": grads}
