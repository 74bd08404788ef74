"""DCDA (dual-consistency domain adaptation, built on DRIT++) updates its
encoders and generator in `update_EG`: `backward_EG()` backpropagates the
first generator loss with `retain_graph=True`, the content encoder, attribute
encoder and generator optimizers step, and then `backward_G_alone()`
backpropagates a second loss built in the same `forward()` (the latent
regression through the attribute encoder and the adversarial loss on the
randomly-attributed fakes).  The steps have changed the attribute encoder's
weights in place, so the second backward raises "one of the variables needed
for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [256, 8]], which is output 0 of AsStridedBackward0,
is at version 2; expected version 1".  Re-created as the model class with its
forward, update_D / update_EG and the two backward helpers, small linear
networks, two iterations.
Buggy lines: `self.enc_a_opt.step()` and `self.gen_opt.step()` between
`backward_EG()` and `backward_G_alone()` (the content encoder's step is harmless:
its weight is not saved, its input needs no gradient).
Source: https://github.com/lkpengcs/DCDA/issues/2"""
import torch
import torch.nn as nn


class DCDA(nn.Module):
    def __init__(self, dim=16, nz=8):
        super().__init__()
        self.nz = nz
        self.disA = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.enc_c = nn.Linear(dim, 32)
        self.enc_a = nn.Linear(dim, nz)
        self.gen = nn.Sequential(nn.Linear(32 + nz, 32), nn.ReLU(), nn.Linear(32, dim))
        self.disA_opt = torch.optim.Adam(self.disA.parameters(), lr=1e-4, betas=(0.5, 0.999))
        self.enc_c_opt = torch.optim.Adam(self.enc_c.parameters(), lr=1e-4, betas=(0.5, 0.999))
        self.enc_a_opt = torch.optim.Adam(self.enc_a.parameters(), lr=1e-4, betas=(0.5, 0.999))
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=1e-4, betas=(0.5, 0.999))
        self.criterionL1 = nn.L1Loss()

    def forward(self):
        self.z_content_a = self.enc_c(self.input_A)
        self.z_attr_a = self.enc_a(self.input_A)
        self.z_random = torch.randn(self.input_A.size(0), self.nz)
        self.fake_AA_encoded = self.gen(torch.cat([self.z_content_a, self.z_attr_a], dim=1))
        self.fake_A_random = self.gen(torch.cat([self.z_content_a, self.z_random], dim=1))
        self.z_attr_random_a = self.enc_a(self.fake_A_random)

    def update_D(self, image_a):
        self.input_A = image_a
        self.forward()
        self.disA_opt.zero_grad()
        pred_fake = self.disA(self.fake_A_random.detach())
        pred_real = self.disA(self.input_A)
        loss_D = nn.functional.softplus(pred_fake).mean() + nn.functional.softplus(-pred_real).mean()
        loss_D.backward()
        self.disA_opt.step()

    def update_EG(self):
        self.enc_c_opt.zero_grad()
        self.enc_a_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_EG()
        self.enc_c_opt.step()
        self.enc_a_opt.step()  # expect: ADL003
        self.gen_opt.step()  # expect: ADL003

        self.enc_c_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_G_alone()
        self.enc_c_opt.step()
        self.gen_opt.step()

    def backward_EG(self):
        loss_G_L1_AA = self.criterionL1(self.fake_AA_encoded, self.input_A) * 10
        loss_kl_za_a = torch.mean(self.z_attr_a ** 2) * 0.01
        loss_G = loss_G_L1_AA + loss_kl_za_a
        loss_G.backward(retain_graph=True)
        self.G_loss = loss_G.item()

    def backward_G_alone(self):
        loss_G_GAN2_A = nn.functional.softplus(-self.disA(self.fake_A_random)).mean()
        loss_z_L1_a = torch.mean(torch.abs(self.z_attr_random_a - self.z_random)) * 10
        loss_z_L1 = loss_z_L1_a + loss_G_GAN2_A
        loss_z_L1.backward(retain_graph=True)
        self.l1_recon_z_loss_a = loss_z_L1_a.item()


def run():
    torch.manual_seed(0)
    model = DCDA()
    for _ in range(2):
        images_a = torch.randn(4, 16)
        model.update_D(images_a)
        model.update_EG()
