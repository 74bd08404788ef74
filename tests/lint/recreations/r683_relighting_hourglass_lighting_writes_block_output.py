"""Image relighting (APikielny/image-relighting, code taken from zhhoper/DPR), issue 4: training
stopped with "Error detected in ReluBackward0" and the anomaly trace through `HG3` -> `middle`
-> ... -> the innermost `lightingNet`.  The hourglass blocks are nested: each block's `middle`
is the next block, the innermost `middle` is the lighting network, and each block hands it the
output of its `low1` `BasicBlock`, whose `forward` ends in `F.relu(out)`.  `lightingNet.forward`
then writes the target lighting features into the first channels of that tensor in place
(`innerFeat[:, 0:self.ncInput, :, :] = upFeat`), overwriting the ReLU output that the ReLU saved
for its backward: `loss.backward()` raises.
Re-created with the model file's classes (fewer channels, two hourglass levels) and a training
function in the shape of the repository's `train.py` (the model returns the image and the
predicted light, the loss compares both).
Buggy line: `innerFeat[:, 0:self.ncInput, :, :] = upFeat`.
Source: https://github.com/APikielny/image-relighting/issues/4"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv3X3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, inplanes, outplanes, batchNorm_type=0):
        super().__init__()
        self.inplanes = inplanes
        self.outplanes = outplanes
        self.conv1 = conv3X3(inplanes, outplanes, 1)
        self.conv2 = conv3X3(outplanes, outplanes, 1)
        if batchNorm_type == 0:
            self.bn1 = nn.BatchNorm2d(outplanes)
            self.bn2 = nn.BatchNorm2d(outplanes)
        else:
            self.bn1 = nn.InstanceNorm2d(outplanes)
            self.bn2 = nn.InstanceNorm2d(outplanes)
        self.shortcuts = nn.Conv2d(inplanes, outplanes, kernel_size=1, stride=1, bias=False)

    def forward(self, x):
        out = self.conv1(x)
        out = self.bn1(out)
        out = F.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.inplanes != self.outplanes:
            out += self.shortcuts(x)
        else:
            out += x
        out = F.relu(out)
        return out


class HourglassBlock(nn.Module):
    def __init__(self, inplane, mid_plane, middleNet):
        super().__init__()
        self.skipLayer = True
        self.upper = BasicBlock(inplane, inplane, batchNorm_type=1)
        self.downSample = nn.MaxPool2d(kernel_size=2, stride=2)
        self.upSample = nn.Upsample(scale_factor=2, mode='nearest')
        self.low1 = BasicBlock(inplane, mid_plane)
        self.middle = middleNet
        self.low2 = BasicBlock(mid_plane, inplane, batchNorm_type=1)

    def forward(self, x, light, count, skip_count):
        out_upper = self.upper(x)
        out_lower = self.downSample(x)
        out_lower = self.low1(out_lower)
        out_lower, out_middle = self.middle(out_lower, light, count + 1, skip_count)
        out_lower = self.low2(out_lower)
        out_lower = self.upSample(out_lower)
        if count >= skip_count and self.skipLayer:
            out = out_lower + out_upper
        else:
            out = out_lower
        return out, out_middle


class lightingNet(nn.Module):
    def __init__(self, ncInput, ncOutput, ncMiddle):
        super().__init__()
        self.ncInput = ncInput
        self.predict_FC1 = nn.Conv2d(ncInput, ncMiddle, kernel_size=1, stride=1, bias=False)
        self.predict_relu1 = nn.PReLU()
        self.predict_FC2 = nn.Conv2d(ncMiddle, ncOutput, kernel_size=1, stride=1, bias=False)
        self.post_FC1 = nn.Conv2d(ncOutput, ncMiddle, kernel_size=1, stride=1, bias=False)
        self.post_relu1 = nn.PReLU()
        self.post_FC2 = nn.Conv2d(ncMiddle, ncInput, kernel_size=1, stride=1, bias=False)
        self.post_relu2 = nn.ReLU()

    def forward(self, innerFeat, target_light, count, skip_count):
        x = innerFeat[:, 0:self.ncInput, :, :]
        _, _, row, col = x.shape
        feat = x.mean(dim=(2, 3), keepdim=True)
        light = self.predict_relu1(self.predict_FC1(feat))
        light = self.predict_FC2(light)
        upFeat = self.post_relu1(self.post_FC1(target_light))
        upFeat = self.post_relu2(self.post_FC2(upFeat))
        upFeat = upFeat.repeat((1, 1, row, col))
        innerFeat[:, 0:self.ncInput, :, :] = upFeat  # missed: ADL001
        return innerFeat, light


class HourglassNet(nn.Module):
    def __init__(self, baseFilter=4):
        super().__init__()
        self.ncLight = 6
        self.ncOutLight = 9
        self.ncPre = baseFilter
        self.ncHG1 = 2 * baseFilter
        self.ncHG0 = 4 * baseFilter + self.ncLight
        self.pre_conv = nn.Conv2d(1, self.ncPre, kernel_size=5, stride=1, padding=2)
        self.pre_bn = nn.BatchNorm2d(self.ncPre)
        self.light = lightingNet(self.ncLight, self.ncOutLight, 16)
        self.HG0 = HourglassBlock(self.ncHG1, self.ncHG0, self.light)
        self.HG1 = HourglassBlock(self.ncPre, self.ncHG1, self.HG0)
        self.conv_1 = nn.Conv2d(self.ncPre, self.ncPre, kernel_size=3, stride=1, padding=1)
        self.bn_1 = nn.BatchNorm2d(self.ncPre)
        self.output = nn.Conv2d(self.ncPre, 1, kernel_size=1, stride=1, padding=0)

    def forward(self, x, target_light, skip_count):
        feat = self.pre_conv(x)
        feat = F.relu(self.pre_bn(feat))
        feat, out_light = self.HG1(feat, target_light, 0, skip_count)
        feat = F.relu(self.bn_1(self.conv_1(feat)))
        out_img = torch.sigmoid(self.output(feat))
        return out_img, out_light


def train(model, optimizer, dataloader, skip_count):
    model.train()
    for I_s, L_s, I_t, L_t in dataloader:
        optimizer.zero_grad()
        I_tp, L_sp = model.forward(I_s, L_t, skip_count)
        loss = F.l1_loss(I_tp, I_t) + F.mse_loss(L_sp, L_s)
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = HourglassNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    batch = (torch.rand(2, 1, 16, 16), torch.randn(2, 9, 1, 1),
             torch.rand(2, 1, 16, 16), torch.randn(2, 9, 1, 1))
    train(model, optimizer, [batch], 0)


if __name__ == "__main__":
    run()
