"""HAMIL (hybrid attention multiple instance learning for tissue segmentation), issue 3: training
`train_cls.py` raises "one of the variables needed for gradient computation has been modified by
an inplace operation", anomaly detection pointing at `x_b4 = self.classifier_b4(x)` in
`networks/ham_net.py`.  `ham_net` deletes two max-pooling layers of the VGG-16 `features`
(`del self.features[30]`, `del self.features[23]`), so `self.features[:24]` now ends with a
convolution and `self.features[24:]` starts with that convolution's `ReLU(inplace=True)`: the
ReLU overwrites `x`, which `classifier_b4` saved for its weight gradient.
Re-created in my own words with the repository's structure: a VGG `features` built the
torchvision way (`make_layers` over a configuration list, every ReLU in place), `ham_net_base`
with its extra convolutions and three side classifiers, `ham_net` deleting the two pools,
`get_parameter_groups`, SGD with four parameter groups and the `train_deep` loop.  Channels are
scaled down so it runs on a CPU in a moment.
Raises at `loss.backward()`; buggy line: `x = self.features[24:](x)`.
Source: https://github.com/HiLab-git/HAMIL/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

CFG_D = [4, 4, 'M', 8, 8, 'M', 16, 16, 16, 'M', 32, 32, 32, 'M', 32, 32, 32, 'M']


def make_layers(cfg):
    layers = []
    in_channels = 3
    for v in cfg:
        if v == 'M':
            layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
        else:
            layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            in_channels = v
    return nn.Sequential(*layers)


class ham_net_base(nn.Module):
    def __init__(self, num_classes=3):
        super(ham_net_base, self).__init__()
        self.extra_convs = nn.Sequential(
            nn.Conv2d(32, 32, kernel_size=3, padding=1), nn.ReLU(),
            nn.Conv2d(32, num_classes, 1),
        )
        self.classifier_b5 = nn.Conv2d(32, num_classes, kernel_size=1)
        self.classifier_b4 = nn.Conv2d(32, num_classes, kernel_size=1)
        self.features = make_layers(CFG_D)
        self.num_classes = num_classes

    def forward(self, x):
        x = self.features[:24](x)
        x_b4 = self.classifier_b4(x)

        x = self.features[24:](x)  # missed: ADL001, the in-place ReLU is reached through a slice `self.features[24:]` of a Sequential built by a helper over a configuration list and shortened with `del`; the slice's first layer is not known statically
        x_b5 = self.classifier_b5(x)

        x_b6 = self.extra_convs(x)

        logit_b6 = F.avg_pool2d(x_b6, kernel_size=(x_b6.size(2), x_b6.size(3))).view(-1, self.num_classes)
        logit_b5 = F.avg_pool2d(x_b5, kernel_size=(x_b5.size(2), x_b5.size(3))).view(-1, self.num_classes)
        logit_b4 = F.avg_pool2d(x_b4, kernel_size=(x_b4.size(2), x_b4.size(3))).view(-1, self.num_classes)
        return logit_b6, logit_b5, logit_b4

    def get_parameter_groups(self):
        groups = ([], [], [], [])
        for name, value in self.named_parameters():
            if "extra" in name:
                groups[2 if "weight" in name else 3].append(value)
            else:
                groups[0 if "weight" in name else 1].append(value)
        return groups


class ham_net(ham_net_base):
    def __init__(self, num_classes=3):
        super(ham_net, self).__init__(num_classes)
        del self.features[30]
        del self.features[23]


def get_model(lr=1e-3):
    model = ham_net()
    param_groups = model.get_parameter_groups()
    optimizer = optim.SGD([
        {"params": param_groups[0], "lr": lr},
        {"params": param_groups[1], "lr": 2 * lr},
        {"params": param_groups[2], "lr": 10 * lr},
        {"params": param_groups[3], "lr": 20 * lr},
    ], momentum=0.9, weight_decay=5e-4, nesterov=True)
    return model, optimizer


def train_deep(model, optimizer, train_dataloader):
    model.train()
    for img, label in train_dataloader:
        logit_b6, logit_b5, logit_b4 = model(img)
        loss1 = F.multilabel_soft_margin_loss(logit_b6, label)
        loss2 = F.multilabel_soft_margin_loss(logit_b5, label)
        loss3 = F.multilabel_soft_margin_loss(logit_b4, label)
        loss = (loss1 + loss2 + loss3) / 3
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model, optimizer = get_model()
    loader = [(torch.randn(2, 3, 32, 32), (torch.rand(2, 3) > 0.5).float()) for _ in range(2)]
    train_deep(model, optimizer, loader)
