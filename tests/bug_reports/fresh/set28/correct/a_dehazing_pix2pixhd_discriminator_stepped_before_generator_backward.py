"""Image dehazing with a pix2pixHD-style GAN (EPDN): one call of the model returns every loss of
the iteration (`D_fake` on the detached fake, `D_real`, and the generator's `G_GAN` and
`G_GAN_Feat` computed by running the discriminator on the fake image, plus `G_L2` and
`G_VGG`). train.py then does `loss_D.backward(); optimizer_D.step()` first, freezes D, and calls
`loss_G.backward(retain_graph=True)`: the discriminator's weights that the generator's losses
saved (the convolutions run on the fake image) were just changed in place by the step, and
backward raises "one of the variables needed for gradient computation has been modified by an
inplace operation: [torch.cuda.FloatTensor [512, 256, 4, 4]] is at version 2; expected version
1". The answer confirmed in the thread: move `model.module.optimizer_D.step()` after
`loss_G.backward()`, so the generator's gradients are taken through the discriminator the losses
were computed with (as pix2pixHD does).
Source: https://github.com/ErinChen1/EPDN/issues/8
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(3, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
            nn.Conv2d(ch, 3, 3, padding=1), nn.Tanh())

    def forward(self, hazy):
        return self.net(hazy)


class NLayerDiscriminator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.model0 = nn.Sequential(nn.Conv2d(6, ch, 4, stride=2, padding=1), nn.LeakyReLU(0.2))
        self.model1 = nn.Sequential(nn.Conv2d(ch, ch * 2, 4, stride=2, padding=1), nn.LeakyReLU(0.2))
        self.model2 = nn.Conv2d(ch * 2, 1, 3, padding=1)

    def forward(self, x):
        feats = [self.model0(x)]
        feats.append(self.model1(feats[-1]))
        feats.append(self.model2(feats[-1]))
        return feats


class FrozenFeatures(nn.Module):
    """Stands in for the VGG19 of the perceptual loss: fixed, never trained."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        for p in self.parameters():
            p.requires_grad = False

    def forward(self, x):
        return F.relu(self.conv(x))


class Pix2PixHDModel(nn.Module):
    loss_names = ['G_GAN', 'G_GAN_Feat', 'G_VGG', 'D_real', 'D_fake', 'G_L2']

    def __init__(self):
        super().__init__()
        self.netG = Generator()
        self.netD = NLayerDiscriminator()
        self.vgg = FrozenFeatures()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def gan_loss(self, pred, target_is_real):
        target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
        return F.mse_loss(pred, target)

    def forward(self, hazy, clear):
        fake = self.netG(hazy)
        pred_fake_pool = self.netD(torch.cat((hazy, fake.detach()), dim=1))
        loss_D_fake = self.gan_loss(pred_fake_pool[-1], False)
        pred_real = self.netD(torch.cat((hazy, clear), dim=1))
        loss_D_real = self.gan_loss(pred_real[-1], True)
        pred_fake = self.netD(torch.cat((hazy, fake), dim=1))
        loss_G_GAN = self.gan_loss(pred_fake[-1], True)
        loss_G_GAN_Feat = sum(F.l1_loss(f, r.detach()) for f, r in zip(pred_fake[:-1], pred_real[:-1])) * 10.0
        loss_G_VGG = F.l1_loss(self.vgg(fake), self.vgg(clear)) * 10.0
        loss_G_L2 = F.mse_loss(fake, clear) * 10.0
        return [loss_G_GAN, loss_G_GAN_Feat, loss_G_VGG, loss_D_real, loss_D_fake, loss_G_L2], fake


model = Pix2PixHDModel()
dataset = [(torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)) for _ in range(3)]

history = []
for epoch in range(2):
    for hazy, clear in dataset:
        losses, generated = model(hazy, clear)
        losses = [torch.mean(x) for x in losses]
        loss_dict = dict(zip(model.loss_names, losses))

        loss_D = (loss_dict['D_fake'] + loss_dict['D_real']) * 0.5
        loss_G = loss_dict['G_GAN_Feat'] + loss_dict['G_GAN']
        loss_Enhance = loss_dict['G_L2'] + loss_dict['G_VGG']

        # update discriminator weights
        model.optimizer_D.zero_grad()
        loss_D.backward()

        for p in model.netD.parameters():
            p.requires_grad = False
        # update generator weights
        model.optimizer_G.zero_grad()
        loss_G.backward(retain_graph=True)
        model.optimizer_D.step()

        loss_Enhance.backward()
        model.optimizer_G.step()
        for p in model.netD.parameters():
            p.requires_grad = True
        history.append([loss_D.item(), loss_G.item(), loss_Enhance.item()])

result = {
    "losses": torch.tensor(history),
    "generator": [p.detach().clone() for p in model.netG.parameters()],
    "discriminator": [p.detach().clone() for p in model.netD.parameters()],
}
