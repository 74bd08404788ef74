"""asdnet (adversarial segmentation/synthesis network): an issue on
`runGAN.py` points out that in step 5.2, "update D network", the
discriminator's losses are backpropagated (`loss.backward()` at two lines)
through the generator's output, and `optimizer.step()` for G and D both run
later, so "gradients computed by line 942 and line 953 may be used to
update G & D, while G should not be updated here"; the author agrees
("Theoretically, you're right").  Re-created in the script's order: both
optimizers cleared at the top of the iteration, G's forward, D's real/fake
losses backpropagated without detaching G's output, G's own loss (voxel +
adversarial) backpropagated, then both steps.  Nothing raises; G's step
uses the gradient of D's loss as well as its own.
Buggy line: `outputD_fake = netD(outputG)` in the D update (G's output not
detached, D's loss reaches G's gradients before G's step).
Source: https://github.com/ginobilinie/asdnet/issues/2"""
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        return self.net(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2),
                                 nn.Flatten(), nn.Linear(4 * 4 * 4, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


def train_step(netG, netD, optimizer, optimizerD, inputs, labels, lambda_adv=0.5):
    criterion_bce = nn.BCELoss()
    criterion_mse = nn.MSELoss()
    optimizer.zero_grad()
    optimizerD.zero_grad()

    outputG = netG(inputs)

    ## (5.2) update D network
    real_label = torch.ones(inputs.size(0), 1)
    fake_label = torch.zeros(inputs.size(0), 1)
    outputD_real = netD(labels)
    lossD_real = criterion_bce(outputD_real, real_label)
    lossD_real.backward()
    outputD_fake = netD(outputG)  # missed: ADL024
    lossD_fake = criterion_bce(outputD_fake, fake_label)
    lossD_fake.backward(retain_graph=True)

    ## (5.3) update G network
    lossG_G = criterion_mse(outputG, labels)
    lossG_D = criterion_bce(netD(outputG), real_label)
    lossG = lossG_G + lambda_adv * lossG_D
    lossG.backward()

    optimizer.step()
    optimizerD.step()
    return lossG


def bug_shows():
    """G's gradient at its step is not the gradient of G's loss alone."""
    torch.manual_seed(0)
    netG, netD = Generator(), Discriminator()
    optimizer = torch.optim.SGD(netG.parameters(), lr=0.0)
    optimizerD = torch.optim.SGD(netD.parameters(), lr=0.0)
    inputs, labels = torch.randn(2, 1, 8, 8), torch.randn(2, 1, 8, 8)
    train_step(netG, netD, optimizer, optimizerD, inputs, labels)
    got = [p.grad.clone() for p in netG.parameters()]
    outputG = netG(inputs)
    lossG = nn.MSELoss()(outputG, labels) + 0.5 * nn.BCELoss()(netD(outputG), torch.ones(2, 1))
    want = torch.autograd.grad(lossG, list(netG.parameters()))
    return any(not torch.allclose(g, w) for g, w in zip(got, want))
