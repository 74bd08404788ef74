"""A super-resolution repository's VGG perceptual loss (EDSR's, copied into
RCAN's training and test code): it slices a pretrained VGG-19's feature
layers into `self.vgg = nn.Sequential(*modules[:35])` and writes
`self.vgg.requires_grad = False`.  An `nn.Sequential` has no such flag: the
assignment sets a new attribute and every VGG weight still requires grad, so
each training step's backward through `self.vgg(sr)` computes VGG's weight
gradients and adds them to `.grad`, which the optimizer (built from the
model's parameters only) never uses and nothing clears.  Silent;
`bug_shows()` trains two steps and finds VGG's gradients piled up.
`self.vgg.requires_grad_(False)` (or a loop setting `p.requires_grad = False`)
freezes it.
Source: https://github.com/yulunzhang/RCAN (RCAN_TrainCode/code/loss/vgg.py)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def vgg_features():
    """Stands in for `torchvision.models.vgg19(pretrained=True).features`."""
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
    )


class MeanShift(nn.Conv2d):
    def __init__(self, rgb_range, rgb_mean, rgb_std, sign=-1):
        super().__init__(3, 3, kernel_size=1)
        std = torch.Tensor(rgb_std)
        self.weight.data = torch.eye(3).view(3, 3, 1, 1) / std.view(3, 1, 1, 1)
        self.bias.data = sign * rgb_range * torch.Tensor(rgb_mean) / std
        for p in self.parameters():
            p.requires_grad = False


class VGG(nn.Module):
    def __init__(self, conv_index, rgb_range=1):
        super(VGG, self).__init__()
        modules = [m for m in vgg_features()]
        if conv_index == '22':
            self.vgg = nn.Sequential(*modules[:4])
        elif conv_index == '54':
            self.vgg = nn.Sequential(*modules[:7])

        vgg_mean = (0.485, 0.456, 0.406)
        vgg_std = (0.229 * rgb_range, 0.224 * rgb_range, 0.225 * rgb_range)
        self.sub_mean = MeanShift(rgb_range, vgg_mean, vgg_std)
        self.vgg.requires_grad = False  # expect: ADL016

    def forward(self, sr, hr):
        def _forward(x):
            x = self.sub_mean(x)
            x = self.vgg(x)
            return x

        vgg_sr = _forward(sr)
        with torch.no_grad():
            vgg_hr = _forward(hr.detach())
        return F.mse_loss(vgg_sr, vgg_hr)


class TinySR(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 3, 3, padding=1)

    def forward(self, x):
        return x + self.body(x)


def bug_shows():
    torch.manual_seed(0)
    model, loss = TinySR(), VGG('54')
    optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
    lr_img, hr_img = torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)
    piled = []
    for _ in range(2):
        optimizer.zero_grad()
        loss(model(lr_img), hr_img).backward()
        optimizer.step()
        grad = loss.vgg[0].weight.grad
        piled.append(None if grad is None else grad.clone())
    if piled[0] is None:
        return False  # frozen: no gradient computed for VGG
    # VGG's weights still require grad, get gradients every step, and keep the sum
    return all(p.requires_grad for p in loss.vgg.parameters()) and bool(piled[0].abs().sum() > 0) \
        and not torch.allclose(piled[1], piled[0])
