"""DSM (stereo matching with a disparity, uncertainty and refinement head)
predicts the uncertainty from the entropy of the probability volume with an
`UncertNet`: two `nn.Sequential(conv, batch norm, nn.ReLU())` blocks, then
`out += x` adds the entropy back before the last convolution.  `out` is the
output of the second block's ReLU, which ReLU keeps for its backward, so
`loss.backward()` in train.py raises "one of the variables needed for
gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [1, 32, 256, 512]], which is output 0 of
ReluBackward0, is at version 1; expected version 0".  Re-created as the
uncertainty net, a small disparity model computing the entropy, the loss
module's `uncertainty_loss` and the training step, two iterations.
Buggy line: `out += x` in `UncertNet.forward`.
Source: https://github.com/jzhangbs/DSM/issues/2"""
import torch
import torch.nn as nn


class UncertNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(1, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.conv2 = nn.Sequential(nn.Conv2d(8, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.conv3 = nn.Conv2d(8, 1, 3, 1, 1, bias=False)

    def forward(self, x):
        out = self.conv1(x)
        out = self.conv2(out)
        out += x  # expect: ADL001
        out = self.conv3(out)
        return out


class Model(nn.Module):
    def __init__(self, max_d=8):
        super().__init__()
        self.max_d = max_d
        self.reg_net = nn.Conv2d(2, max_d, 3, 1, 1)
        self.uncert_net = UncertNet()

    def soft_argmin(self, prob_volume):
        disp = torch.arange(self.max_d, dtype=torch.float32).view(1, self.max_d, 1, 1)
        return torch.sum(disp * prob_volume, dim=1, keepdim=True)

    def forward(self, left, right):
        score_volume = self.reg_net(torch.cat([left, right], dim=1))
        prob_volume = torch.softmax(score_volume, dim=1)
        estimated_disp_image = self.soft_argmin(prob_volume)
        entropy = torch.sum(-prob_volume * torch.log(torch.clamp(prob_volume, 1e-9, 1.)), dim=1, keepdim=True)
        uncertainty_image = self.uncert_net(entropy)
        return estimated_disp_image, uncertainty_image


class Loss(nn.Module):
    def uncertainty_loss(self, true, pred, uncert):
        abs_err = torch.abs(true - pred)
        return torch.mean(abs_err * torch.exp(-uncert) + uncert)

    def forward(self, images, disp_true):
        estimated_disp_image, uncertainty_image = images
        initial_loss = torch.mean(torch.abs(disp_true - estimated_disp_image))
        return initial_loss + self.uncertainty_loss(disp_true, estimated_disp_image, uncertainty_image)


def run():
    torch.manual_seed(0)
    model, compute_loss = Model(), Loss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(2):
        left, right = torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8)
        disp_true = torch.rand(2, 1, 8, 8) * 7
        optimizer.zero_grad()
        outputs = model(left, right)
        loss = compute_loss(outputs, disp_true)
        loss.backward()
        optimizer.step()
