"""DSGAN (real-world super-resolution): the discriminator's scores of the
fake image, `fake_tex = model_d(fake_img)`, are computed once per iteration;
the discriminator is updated with `d_tex_loss.backward(retain_graph=True)`
and `optimizer_d.step()`, and then the generator's loss module is called with
the same `fake_tex`, so `g_loss.backward()` runs through the discriminator's
weights as they were before the step ("[torch.FloatTensor [1, 256, 1, 1]] is
at version 2; expected version 1"; users went back to torch 1.1 to run it).
Source: https://github.com/manuelfritsche/real-world-sr/issues/18"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class FilterHigh(nn.Module):
    def __init__(self, kernel_size=5):
        super().__init__()
        self.filter_low = nn.AvgPool2d(kernel_size, stride=1, padding=kernel_size // 2, count_include_pad=False)

    def forward(self, img):
        return img - self.filter_low(img)


class Generator(nn.Module):
    def __init__(self, n_res_blocks=1):
        super().__init__()
        self.block_input = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.PReLU())
        self.res_blocks = nn.ModuleList([nn.Conv2d(8, 8, 3, padding=1) for _ in range(n_res_blocks)])
        self.block_output = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, x):
        block = self.block_input(x)
        for res_block in self.res_blocks:
            block = block + res_block(block)
        return torch.sigmoid(self.block_output(block))


class Discriminator(nn.Module):
    def __init__(self, kernel_size=5):
        super().__init__()
        self.filter = FilterHigh(kernel_size)
        self.net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(16, 1, 3, padding=1))

    def forward(self, x):
        return self.net(self.filter(x))


class GeneratorLoss(nn.Module):
    def __init__(self, w_col=1.0, w_tex=0.005):
        super().__init__()
        self.w_col = w_col
        self.w_tex = w_tex
        self.color_filter = nn.AvgPool2d(5, stride=1, padding=2)

    def forward(self, tex_labels, out_images, target_images):
        tex_loss = -torch.mean(tex_labels)
        color_loss = F.l1_loss(self.color_filter(out_images), self.color_filter(target_images))
        return self.w_col * color_loss + self.w_tex * tex_loss


def discriminator_loss(real_tex, fake_tex):
    return F.softplus(-real_tex).mean() + F.softplus(fake_tex).mean()


def train(train_loader, disc_freq=1, gen_freq=1, learning_rate=1e-3):
    model_g = Generator()
    model_d = Discriminator()
    g_loss_module = GeneratorLoss()
    optimizer_g = optim.Adam(model_g.parameters(), lr=learning_rate, betas=[0.5, 0.999])
    optimizer_d = optim.Adam(model_d.parameters(), lr=learning_rate, betas=[0.5, 0.999])
    iteration = 1
    for input_img, disc_img in train_loader:
        iteration += 1
        fake_img = model_g(input_img)
        real_tex = model_d(disc_img)
        fake_tex = model_d(fake_img)

        if iteration % disc_freq == 0:
            model_d.zero_grad()
            d_tex_loss = discriminator_loss(real_tex, fake_tex)
            d_tex_loss.backward(retain_graph=True)
            optimizer_d.step()  # expect: ADL003

        if iteration % gen_freq == 0:
            model_g.zero_grad()
            g_loss = g_loss_module(fake_tex, fake_img, input_img)
            g_loss.backward()
            optimizer_g.step()


def run():
    torch.manual_seed(0)
    train([(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8)) for _ in range(2)])
