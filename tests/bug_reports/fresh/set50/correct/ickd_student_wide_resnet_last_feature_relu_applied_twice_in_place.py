"""Knowledge distillation on CIFAR-100 with inter-channel correlation (ICKD): a WideResNet student
learns from a WideResNet teacher, with cross-entropy on its logits plus the ICKD loss between the
channel correlation matrices of the two networks' last feature maps (the student's through a 1x1
embedding). The networks return their features when called with `is_feat=True`; WideResNet.forward
collects them through its shared `nn.ReLU(inplace=True)`, and the last one, `self.relu(f4)`, runs
the in-place ReLU a second time on f4, which the first `out = self.relu(f4)` already rectified and
keeps for its backward. The student's `loss.backward()` fails with "one of the variables needed for
gradient computation has been modified by an inplace operation: [...], which is output 0 of Relu,
is at version 2; expected version 1 instead". The change the thread gives: write the
network's feature code as CRD's (RepDistiller) does, `out = self.relu(self.bn1(out))`, `f4 = out`.
Source: https://github.com/ADLab-AutoDrive/ICKD/issues/2
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasicBlock(nn.Module):
    def __init__(self, in_planes, out_planes, stride):
        super().__init__()
        self.bn1 = nn.BatchNorm2d(in_planes)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(in_planes, out_planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_planes)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_planes, out_planes, 3, stride=1, padding=1, bias=False)
        self.equalInOut = in_planes == out_planes
        self.convShortcut = None if self.equalInOut else nn.Conv2d(in_planes, out_planes, 1, stride=stride, bias=False)

    def forward(self, x):
        features = [self.bn1(x)]
        if not self.equalInOut:
            x = self.relu1(self.bn1(x))
            out = x
        else:
            out = self.relu1(self.bn1(x))
        out = self.relu2(self.bn2(self.conv1(out)))
        out = self.conv2(out)
        out = torch.add(x if self.equalInOut else self.convShortcut(x), out)
        return out, features


class WideResNet(nn.Module):
    def __init__(self, num_classes, widen_factor):
        super().__init__()
        channels = [16, 16 * widen_factor, 32 * widen_factor, 64 * widen_factor]
        self.conv1 = nn.Conv2d(3, channels[0], 3, padding=1, bias=False)
        self.block1 = BasicBlock(channels[0], channels[1], 1)
        self.block2 = BasicBlock(channels[1], channels[2], 2)
        self.block3 = BasicBlock(channels[2], channels[3], 2)
        self.bn1 = nn.BatchNorm2d(channels[3])
        self.relu = nn.ReLU(inplace=True)
        self.fc = nn.Linear(channels[3], num_classes)
        self.nChannels = channels[3]

    def forward(self, x, is_feat=False):
        out = self.conv1(x)
        out, f1 = self.block1(out)
        f1_act = [self.relu(f) for f in f1]
        out, f2 = self.block2(out)
        f2_act = [self.relu(f) for f in f2]
        out, f3 = self.block3(out)
        f3_act = [self.relu(f) for f in f3]
        out = self.relu(self.bn1(out))
        f4 = out
        out = F.avg_pool2d(out, 8)
        out = out.view(-1, self.nChannels)
        f5 = out
        out = self.fc(out)
        if is_feat:
            return f1_act + f2_act + f3_act + [f4, f5], out
        return out


class Embed(nn.Module):
    def __init__(self, dim_in, dim_out):
        super().__init__()
        self.conv2d = nn.Conv2d(dim_in, dim_out, kernel_size=1, bias=False)
        self.l2norm = nn.BatchNorm2d(dim_out)

    def forward(self, x):
        return self.l2norm(self.conv2d(x))


class ICKDLoss(nn.Module):
    def __init__(self, s_dim, feat_dim):
        super().__init__()
        self.embed_s = Embed(s_dim, feat_dim)

    def forward(self, g_s, g_t):
        return [self.batch_loss(f_s, f_t) for f_s, f_t in zip(g_s, g_t)]

    def batch_loss(self, f_s, f_t):
        f_s = self.embed_s(f_s)
        bsz, ch = f_s.shape[0], f_s.shape[1]
        f_s = f_s.view(bsz, ch, -1)
        f_t = f_t.view(bsz, ch, -1)
        emd_s = F.normalize(torch.bmm(f_s, f_s.permute(0, 2, 1)), dim=2)
        emd_t = F.normalize(torch.bmm(f_t, f_t.permute(0, 2, 1)), dim=2)
        G_diff = emd_s - emd_t
        return (G_diff * G_diff).view(bsz, -1).sum() / (ch * bsz)


model_t = WideResNet(num_classes=10, widen_factor=2).eval()
model_s = WideResNet(num_classes=10, widen_factor=1)
criterion_kd = ICKDLoss(s_dim=64, feat_dim=128)
optimizer = torch.optim.SGD(list(model_s.parameters()) + list(criterion_kd.parameters()), lr=0.05, momentum=0.9)
losses = []
for step in range(2):
    images, targets = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    feat_s, logit_s = model_s(images, is_feat=True)
    with torch.no_grad():
        feat_t, logit_t = model_t(images, is_feat=True)
        feat_t = [f.detach() for f in feat_t]
    loss_group = criterion_kd([feat_s[-2]], [feat_t[-2]])
    loss = F.cross_entropy(logit_s, targets) + 2.5 * sum(loss_group)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses), "weights": [p.detach().clone() for p in model_s.parameters()]}
