"""Progressive GAN from facebookresearch/pytorch_GAN_zoo trained with the GDPP diversity loss
(`--GDPP True`): `optimizeParameters` backpropagates the generator's adversarial loss with
`lossGFake.backward()`, then computes `GDPPLoss(phiDReal, phiGFake, backward=True)` from the
discriminator's features of the same fake batch, `phiGFake`, whose graph that first backward
already freed. The GDPP backward raises "Trying to backward through the graph a second time".
Source: https://github.com/facebookresearch/pytorch_GAN_zoo/issues/83 ("I can't using GDPP config
train any model": "backward lossGFake the compute graph has been released. So when backward GDPP
loss there is not compute graph"); fixed by pull request #85, "set
lossGFake.backward(retain_graph=True) to enable GDPP loss for training".
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

LATENT, FEATURES = 8, 16


def GDPPLoss(phiFake, phiReal, backward=True):
    """Determinantal point process loss on the discriminator's last features (as in the zoo)."""

    def compute_diversity(phi):
        phi = F.normalize(phi, p=2, dim=1)
        eigVals, eigVecs = torch.linalg.eigh(phi @ phi.t())
        return eigVals, eigVecs

    def normalize_min_max(eigVals):
        minV, maxV = torch.min(eigVals), torch.max(eigVals)
        return (eigVals - minV) / (maxV - minV)

    fakeEigVals, fakeEigVecs = compute_diversity(phiFake)
    realEigVals, realEigVecs = compute_diversity(phiReal)
    magnitudeLoss = 0.0001 * F.mse_loss(target=realEigVals, input=fakeEigVals)
    structureLoss = -torch.sum(torch.mul(fakeEigVecs, realEigVecs), 0)
    weightedStructureLoss = torch.sum(torch.mul(normalize_min_max(realEigVals), structureLoss))
    gdppLoss = magnitudeLoss + weightedStructureLoss
    if backward:
        gdppLoss.backward(retain_graph=True)
    return gdppLoss.detach()


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(12, 32), nn.LeakyReLU(0.2), nn.Linear(32, FEATURES), nn.LeakyReLU(0.2))
        self.decision = nn.Linear(FEATURES, 1)

    def forward(self, x, getFeature=False):
        phi = self.features(x)
        if getFeature:
            return self.decision(phi), phi
        return self.decision(phi)


netG = nn.Sequential(nn.Linear(LATENT, 32), nn.ReLU(), nn.Linear(32, 12))
netD = Discriminator()
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.0, 0.99))
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.0, 0.99))

real_input = torch.randn(6, 12)
history = []
for step in range(3):
    # Update the discriminator (WGAN-GP style loss, without the penalty for brevity)
    optimizerD.zero_grad()
    fake = netG(torch.randn(6, LATENT)).detach()
    lossD = netD(fake).mean() - netD(real_input).mean()
    lossD.backward()
    optimizerD.step()

    # Update the generator
    optimizerG.zero_grad()
    optimizerD.zero_grad()
    predFakeG = netG(torch.randn(6, LATENT))
    predFakeD, phiGFake = netD(predFakeG, True)
    lossGFake = -predFakeD.mean()
    lossGFake.backward()
    _, phiDReal = netD(real_input, True)
    lossGDPP = GDPPLoss(phiDReal, phiGFake, backward=True)
    optimizerG.step()
    history.append((lossD.detach(), lossGFake.detach(), lossGDPP))

result = {"losses": history, "generator": [p.detach().clone() for p in netG.parameters()],
          "discriminator": [p.detach().clone() for p in netD.parameters()]}
