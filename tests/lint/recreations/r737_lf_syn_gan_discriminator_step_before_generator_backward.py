"""GAN-optimised learning-based view synthesis for light field cameras, `train_gan.py`:
`evaluate_system` scores the synthesised view with the discriminator (`fake_out =
d_net(fake_img).mean()`), backpropagates the discriminator loss with `retain_graph=True`, steps
`d_optimizer`, and then builds the generator loss from the same `fake_out` and backpropagates it.
The discriminator's weights that `fake_out`'s graph saved were just updated in place, so the
generator backward raises "one of the variables needed for gradient computation has been
modified by an inplace operation".
Re-created in my own words with the script's structure: the depth and colour networks, the
discriminator, the generator loss class, `evaluate_system` with its colour-feature leaf and the
hand-carried gradient from the colour features back into the depth network, and
`train_system`'s iteration loop.
Raises at `g_loss.backward()`; buggy line: `d_optimizer.step()` before it.
Source: https://github.com/GIMPS/gan_lf_syn/blob/c0f0f96166870dd15e66f4050d3b7caa78d595b4/train_gan.py"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class DepthNetModel(nn.Module):
    def __init__(self, in_channels=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(in_channels, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        return self.net(x)


class ColorNetModel(nn.Module):
    def __init__(self, in_channels=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(in_channels, 8, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(8, 3, 3, padding=1))

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, 1, 3, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


class GeneratorLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.mse = nn.MSELoss()

    def forward(self, out_labels, out_images, target_images):
        adversarial_loss = torch.mean(1 - out_labels)
        image_loss = self.mse(out_images, target_images)
        return image_loss + 0.001 * adversarial_loss


def prepare_color_features(depth, images):
    # warp each input view by the estimated disparity (a shift proportional to the depth map)
    shifted = images * torch.sigmoid(depth)
    return torch.cat([shifted, depth], dim=1)


def evaluate_system(depth_net, color_net, d_net, depth_optimizer, color_optimizer, d_optimizer, criterion,
                    images, depthFeatures, reference, isTraining, isTestDuringTraining):
    depthRes = depth_net(depthFeatures)
    depth = depthRes.data

    colorFeatures = prepare_color_features(depth, images)
    colorFeatures = Variable(colorFeatures, requires_grad=True)
    colorRes = color_net(colorFeatures)
    finalImg = colorRes.data

    if isTraining and not isTestDuringTraining:
        real_img = Variable(reference)
        fake_img = colorRes
        d_net.zero_grad()
        real_out = d_net(real_img).mean()
        fake_out = d_net(fake_img).mean()
        d_loss = 1 - real_out + fake_out
        d_loss.backward(retain_graph=True)
        d_optimizer.step()  # expect: ADL003
        g_loss = criterion(fake_out, fake_img, real_img)

        depth_optimizer.zero_grad()
        color_optimizer.zero_grad()
        g_loss.backward()

        dzdx = colorFeatures.grad
        dzdx = dzdx[:, 3:4] + (dzdx[:, :3] * images * torch.sigmoid(depth) * (1 - torch.sigmoid(depth))).sum(1, keepdim=True)
        depthRes.backward(dzdx)

        color_optimizer.step()
        depth_optimizer.step()

    return finalImg


def train_system(depth_net, color_net, d_net, depth_optimizer, color_optimizer, d_optimizer, criterion, n_iters=2):
    for it in range(n_iters):
        depth_net.train(True)
        color_net.train(True)
        images = torch.rand(1, 3, 8, 8)
        depthFeat = torch.rand(1, 4, 8, 8)
        reference = torch.rand(1, 3, 8, 8)
        evaluate_system(depth_net, color_net, d_net, depth_optimizer, color_optimizer, d_optimizer, criterion,
                        images, depthFeat, reference, True, False)


def run():
    torch.manual_seed(0)
    depth_net, color_net, d_net = DepthNetModel(), ColorNetModel(), Discriminator()
    depth_optimizer = torch.optim.Adam(depth_net.parameters(), lr=1e-4)
    color_optimizer = torch.optim.Adam(color_net.parameters(), lr=1e-4)
    d_optimizer = torch.optim.Adam(d_net.parameters(), lr=1e-4)
    train_system(depth_net, color_net, d_net, depth_optimizer, color_optimizer, d_optimizer, GeneratorLoss())
