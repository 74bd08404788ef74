"""ESRGAN super-resolution training (Lornatang/ESRGAN-PyTorch, train_gan.py): `main()` builds
`g_optimizer` over the generator and `d_optimizer` over the discriminator and calls
`train(..., g_optimizer, g_optimizer, epoch, ...)`: the generator's optimizer is passed for both
parameters. Inside `train`, the discriminator phase ends with `d_optimizer.step()`, which is the
generator's Adam again: it moves the generator a second time with the gradients left from the
generator phase (the discriminator phase backpropagates through `sr.detach()` only), and the
discriminator, whose gradients are computed every iteration, is never updated. No error.
The reporter: "It seems that line 147 and 148 in train_gan.py are all "g_optimizer", I wonder the
second should be "d_optimizer"?"; the maintainer: "Yeah! You are right. Thank you for pointing out
the mistake."
Source: https://github.com/Lornatang/ESRGAN-PyTorch/issues/39
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

torch.manual_seed(0)

SCALE, GT_SIZE = 2, 8


class ResidualDenseBlock(nn.Module):
    def __init__(self, channels=8, growth=4):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, growth, 3, 1, 1)
        self.conv2 = nn.Conv2d(channels + growth, channels, 3, 1, 1)
        self.lrelu = nn.LeakyReLU(0.2)

    def forward(self, x):
        out1 = self.lrelu(self.conv1(x))
        out2 = self.conv2(torch.cat([x, out1], 1))
        return out2 * 0.2 + x


class Generator(nn.Module):
    def __init__(self, channels=8, num_rrdb=2):
        super().__init__()
        self.conv1 = nn.Conv2d(3, channels, 3, 1, 1)
        self.trunk = nn.Sequential(*[ResidualDenseBlock(channels) for _ in range(num_rrdb)])
        self.upsample = nn.Conv2d(channels, channels * SCALE * SCALE, 3, 1, 1)
        self.conv2 = nn.Conv2d(channels, 3, 3, 1, 1)

    def forward(self, x):
        out = self.conv1(x)
        out = out + self.trunk(out)
        out = F.pixel_shuffle(self.upsample(out), SCALE)
        return self.conv2(F.leaky_relu(out, 0.2))


class DiscriminatorForVGG(nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, channels, 3, 1, 1), nn.LeakyReLU(0.2),
            nn.Conv2d(channels, channels, 4, 2, 1), nn.BatchNorm2d(channels), nn.LeakyReLU(0.2),
        )
        self.classifier = nn.Linear(channels * (GT_SIZE // 2) ** 2, 1)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def make_batches(n=4, batch_size=4):
    batches = []
    for _ in range(n):
        gt = torch.rand(batch_size, 3, GT_SIZE, GT_SIZE)
        lr = F.avg_pool2d(gt, SCALE)
        batches.append({"gt": gt, "lr": lr})
    return batches


def define_optimizer(g_model, d_model):
    g_optimizer = optim.Adam(g_model.parameters(), 1e-3, (0.9, 0.999))
    d_optimizer = optim.Adam(d_model.parameters(), 1e-3, (0.9, 0.999))
    return g_optimizer, d_optimizer


def train(g_model, d_model, batches, pixel_criterion, adversarial_criterion, g_optimizer, d_optimizer, epoch):
    g_model.train()
    d_model.train()
    pixel_weight, adversarial_weight = 1.0, 0.005
    g_losses, d_losses = [], []
    for batch_data in batches:
        gt = batch_data["gt"]
        lr = batch_data["lr"]
        batch_size = gt.shape[0]
        real_label = torch.full([batch_size, 1], 1.0)
        fake_label = torch.full([batch_size, 1], 0.0)

        # start training the generator model
        for d_parameters in d_model.parameters():
            d_parameters.requires_grad = False
        g_model.zero_grad(set_to_none=True)
        sr = g_model(lr)
        gt_output = d_model(gt.detach().clone())
        sr_output = d_model(sr)
        pixel_loss = pixel_criterion(sr, gt)
        d_loss_gt = adversarial_criterion(gt_output - torch.mean(sr_output), fake_label) * 0.5
        d_loss_sr = adversarial_criterion(sr_output - torch.mean(gt_output), real_label) * 0.5
        adversarial_loss = d_loss_gt + d_loss_sr
        g_loss = pixel_weight * pixel_loss + adversarial_weight * adversarial_loss
        g_loss.backward()
        g_optimizer.step()

        # start training the discriminator model
        for d_parameters in d_model.parameters():
            d_parameters.requires_grad = True
        d_model.zero_grad(set_to_none=True)
        gt_output = d_model(gt)
        sr_output = d_model(sr.detach().clone())
        d_loss_gt = adversarial_criterion(gt_output - torch.mean(sr_output), real_label) * 0.5
        d_loss_gt.backward(retain_graph=True)
        sr_output = d_model(sr.detach().clone())
        d_loss_sr = adversarial_criterion(sr_output - torch.mean(gt_output), fake_label) * 0.5
        d_loss_sr.backward()
        d_loss = d_loss_gt + d_loss_sr
        d_optimizer.step()

        g_losses.append(g_loss.item())
        d_losses.append(d_loss.item())
    return g_losses, d_losses


g_model = Generator()
d_model = DiscriminatorForVGG()
pixel_criterion = nn.L1Loss()
adversarial_criterion = nn.BCEWithLogitsLoss()
g_optimizer, d_optimizer = define_optimizer(g_model, d_model)
batches = make_batches()

history = []
for epoch in range(2):
    history.append(train(g_model,
                         d_model,
                         batches,
                         pixel_criterion,
                         adversarial_criterion,
                         g_optimizer,
                         d_optimizer,
                         epoch))

result = {
    "g_losses": torch.tensor([loss for g_losses, _ in history for loss in g_losses]),
    "d_losses": torch.tensor([loss for _, d_losses in history for loss in d_losses]),
    "generator": [p.detach().clone() for p in g_model.parameters()],
    "discriminator": [p.detach().clone() for p in d_model.parameters()],
}
