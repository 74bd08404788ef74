"""Anomaly Prediction (future-frame prediction for video anomaly detection):
the training loop computes the generator's total loss, whose adversarial
term is `adversarial_loss(discriminator(G_frame))`, then trains the
discriminator (`D_l.backward(); optimizer_D.step()`), and only then calls
`G_l_t.backward()`, which runs back through the discriminator whose weights
the step changed in place.  With PyTorch >= 1.5 it fails ("modified by an
inplace operation"); the reported fix steps both optimizers after both
backward passes.
Source: https://github.com/feiyuhuahuo/Anomaly_Prediction/issues/11"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class UNet(nn.Module):
    def __init__(self, input_channels=12, output_channel=3):
        super().__init__()
        self.inc = nn.Sequential(nn.Conv2d(input_channels, 8, 3, padding=1), nn.ReLU())
        self.outc = nn.Conv2d(8, output_channel, 3, padding=1)

    def forward(self, x):
        return torch.tanh(self.outc(self.inc(x)))


class PixelDiscriminator(nn.Module):
    def __init__(self, input_nc=3, ndf=8):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(input_nc, ndf, kernel_size=1), nn.LeakyReLU(0.2),
            nn.Conv2d(ndf, 1, kernel_size=1))

    def forward(self, x):
        return self.net(x)


class FlowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 2, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class Adversarial_Loss(nn.Module):
    def forward(self, fake_outputs):
        return torch.mean((fake_outputs - 1) ** 2 / 2)


class Discriminate_Loss(nn.Module):
    def forward(self, real_outputs, fake_outputs):
        return torch.mean((real_outputs - 1) ** 2 / 2) + torch.mean(fake_outputs ** 2 / 2)


class Intensity_Loss(nn.Module):
    def forward(self, gen_frames, gt_frames):
        return torch.mean(torch.abs((gen_frames - gt_frames) ** 2))


class Flow_Loss(nn.Module):
    def forward(self, gen_flows, gt_flows):
        return torch.mean(torch.abs(gen_flows - gt_flows))


def train(train_dataloader, iters=2):
    generator = UNet(input_channels=12, output_channel=3)
    discriminator = PixelDiscriminator(input_nc=3)
    optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4)
    optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=2e-5)
    flow_net = FlowNet().eval()
    for p in flow_net.parameters():
        p.requires_grad = False
    adversarial_loss = Adversarial_Loss()
    discriminate_loss = Discriminate_Loss()
    flow_loss = Flow_Loss()
    intensity_loss = Intensity_Loss()

    step = 0
    training = True
    generator = generator.train()
    discriminator = discriminator.train()
    while training:
        for clips in train_dataloader:
            step += 1
            input_frames = clips[:, 0:12, :, :]
            target_frame = clips[:, 12:15, :, :]
            input_last = input_frames[:, 9:12, :, :]

            G_frame = generator(input_frames)
            flow_gt = flow_net(torch.cat([input_last, target_frame], 1))
            flow_pred = flow_net(torch.cat([input_last, G_frame], 1))

            inte_l = intensity_loss(G_frame, target_frame)
            fl_l = flow_loss(flow_pred, flow_gt)
            g_l = adversarial_loss(discriminator(G_frame))
            G_l_t = 1. * inte_l + 2. * fl_l + 0.05 * g_l

            # Train discriminator
            D_l = discriminate_loss(discriminator(target_frame), discriminator(G_frame.detach()))
            optimizer_D.zero_grad()
            D_l.backward()
            optimizer_D.step()  # expect: ADL003

            # Train generator
            optimizer_G.zero_grad()
            G_l_t.backward()
            optimizer_G.step()

            if step >= iters:
                training = False
                break


def run():
    torch.manual_seed(0)
    train([torch.rand(2, 15, 8, 8) * 2 - 1 for _ in range(2)])
