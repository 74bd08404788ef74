"""yolov5-gradcam explains a YOLOv5 detector with full backward hooks on a
target convolution.  YOLOv5's `attempt_load` turns every activation of the
loaded model in place (`m.inplace = True` for `nn.SiLU`, `nn.ReLU`, ...,
"pytorch 1.7.0 compatibility"), so the activation right after the hooked
convolution writes the hook's output view, and the forward pass fails
("Output 0 of BackwardHookFunctionBackward is a view and is being modified
inplace").  The fix sets `inplace = False` on the activations (or hooks the
activation's output instead).
Buggy line: `m.inplace = True` in `attempt_load`, applied to the activation
that follows the hooked convolution.
Expected finding: ADL025 (inplace-after-full-backward-hook).
Source: https://github.com/pooya-mohammadi/yolov5-gradcam/issues/7"""
import torch
import torch.nn as nn


class Conv(nn.Module):
    def __init__(self, c1, c2, k=3):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class TinyYolo(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(Conv(3, 4), Conv(4, 4), nn.Conv2d(4, 7, 1))

    def forward(self, x):
        return self.model(x)


def attempt_load(model):
    for m in model.modules():
        if type(m) in [nn.Hardswish, nn.LeakyReLU, nn.ReLU, nn.ReLU6, nn.SiLU]:
            m.inplace = True  # expect: ADL025
    return model.eval()


class YOLOV5GradCAM:
    def __init__(self, model, layer_name):
        self.model = model
        self.gradients = {}
        self.activations = {}
        target_layer = dict(model.named_modules())[layer_name]
        target_layer.register_forward_hook(self.forward_hook)
        target_layer.register_full_backward_hook(self.backward_hook)

    def forward_hook(self, module, input, output):
        self.activations["value"] = output

    def backward_hook(self, module, grad_input, grad_output):
        self.gradients["value"] = grad_output[0]

    def __call__(self, img):
        score = self.model(img)[:, 4].sum()
        self.model.zero_grad()
        score.backward()
        weights = self.gradients["value"].mean(dim=(2, 3), keepdim=True)
        return torch.relu((weights * self.activations["value"]).sum(1))


def run():
    torch.manual_seed(0)
    model = attempt_load(TinyYolo())
    cam = YOLOV5GradCAM(model, "model.1.bn")
    cam(torch.rand(1, 3, 8, 8))
