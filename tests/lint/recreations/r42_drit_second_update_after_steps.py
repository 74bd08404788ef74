"""DRIT's `update_EG` backpropagates the encoder/generator loss, steps the
content encoder's and generator's optimizers, and then backpropagates a
second loss computed in the same forward pass (`self.fake_A_random`, kept on
the model) through the weights those steps changed.
Source: https://github.com/HsinYingLee/DRIT/issues/48"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class E_content(nn.Module):
    def __init__(self, input_dim=3, dim=8):
        super().__init__()
        self.conv_a = nn.Conv2d(input_dim, dim, 3, padding=1)
        self.conv_b = nn.Conv2d(input_dim, dim, 3, padding=1)

    def forward(self, xa, xb):
        return F.relu(self.conv_a(xa)), F.relu(self.conv_b(xb))


class E_attr(nn.Module):
    def __init__(self, input_dim=3, nz=4):
        super().__init__()
        self.fc_a = nn.Linear(input_dim, nz)
        self.fc_b = nn.Linear(input_dim, nz)

    def forward(self, xa, xb):
        return self.fc_a(xa.mean((2, 3))), self.fc_b(xb.mean((2, 3)))


class G(nn.Module):
    def __init__(self, dim=8, nz=4, output_dim=3):
        super().__init__()
        self.mlp = nn.Linear(nz, dim)
        self.dec_a = nn.Conv2d(dim, output_dim, 3, padding=1)

    def forward_a(self, x, z):
        return torch.tanh(self.dec_a(x * self.mlp(z)[:, :, None, None]))


class Dis(nn.Module):
    def __init__(self, input_dim=3):
        super().__init__()
        self.conv = nn.Conv2d(input_dim, 1, 3, stride=2, padding=1)

    def forward(self, x):
        return [self.conv(x)]


class DRIT(nn.Module):
    def __init__(self, lr=1e-4, nz=4):
        super().__init__()
        self.nz = nz
        self.disA = Dis()
        self.enc_c = E_content()
        self.enc_a = E_attr(nz=nz)
        self.gen = G(nz=nz)
        self.disA_opt = torch.optim.Adam(self.disA.parameters(), lr=lr)
        self.enc_c_opt = torch.optim.Adam(self.enc_c.parameters(), lr=lr)
        self.enc_a_opt = torch.optim.Adam(self.enc_a.parameters(), lr=lr)
        self.gen_opt = torch.optim.Adam(self.gen.parameters(), lr=lr)

    def setgpu_input(self, image_a, image_b):
        self.real_A_encoded = image_a
        self.real_B_encoded = image_b

    def forward(self):
        self.z_content_a, self.z_content_b = self.enc_c.forward(self.real_A_encoded, self.real_B_encoded)
        self.z_attr_a, self.z_attr_b = self.enc_a.forward(self.real_A_encoded, self.real_B_encoded)
        self.z_random = torch.randn(self.real_A_encoded.size(0), self.nz)
        self.fake_A_encoded = self.gen.forward_a(self.z_content_b, self.z_attr_a)
        self.fake_A_random = self.gen.forward_a(self.z_content_b, self.z_random)

    def update_EG(self):
        # update G, Ec, Ea
        self.enc_c_opt.zero_grad()
        self.enc_a_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_EG()
        self.enc_c_opt.step()  # not found: its graph reaches fake_A_random through self.z_content_b
        self.enc_a_opt.step()
        self.gen_opt.step()  # expect: ADL003

        # update G, Ec
        self.enc_c_opt.zero_grad()
        self.gen_opt.zero_grad()
        self.backward_G_alone()
        self.enc_c_opt.step()
        self.gen_opt.step()

    def backward_EG(self):
        loss_G_GAN_A = self.backward_G_GAN(self.fake_A_encoded, self.disA)
        loss_kl_za_a = torch.mean(self.z_attr_a ** 2) * 0.01
        loss_G_L1_A = F.l1_loss(self.fake_A_encoded, self.real_A_encoded) * 10
        loss_G = loss_G_GAN_A + loss_kl_za_a + loss_G_L1_A
        loss_G.backward(retain_graph=True)

    def backward_G_GAN(self, fake, netD=None):
        outs_fake = netD.forward(fake)
        loss_G = 0
        for out_a in outs_fake:
            outputs_fake = torch.sigmoid(out_a)
            all_ones = torch.ones_like(outputs_fake)
            loss_G += F.binary_cross_entropy(outputs_fake, all_ones)
        return loss_G

    def backward_G_alone(self):
        loss_G_GAN2_A = self.backward_G_GAN(self.fake_A_random, self.disA)
        loss_G_GAN2_A.backward()


def run():
    torch.manual_seed(0)
    model = DRIT()
    model.setgpu_input(torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8))
    model.forward()
    model.update_EG()
