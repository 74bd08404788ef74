"""A two-stage inpainting GAN backpropagates the coarse stage's L1 loss
(`retain_graph=True`) and steps the coarse optimizer, then backpropagates a
total loss that contains that same L1 loss and the refinement output built on
the coarse output, through the coarse weights the step changed.
Source: https://github.com/wangyx240/High-Resolution-Image-Inpainting-GAN/issues/7"""
import torch
import torch.nn as nn


class GatedGenerator(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.coarse = nn.Sequential(nn.Conv2d(4, channels, 3, padding=1), nn.ELU(), nn.Conv2d(channels, 3, 3, padding=1))
        self.refinement = nn.Sequential(nn.Conv2d(4, channels, 3, padding=1), nn.ELU(), nn.Conv2d(channels, 3, 3, padding=1))

    def forward(self, img, mask):
        first_masked_img = img * (1 - mask) + mask
        first_out = torch.tanh(self.coarse(torch.cat((first_masked_img, mask), 1)))
        second_masked_img = img * (1 - mask) + first_out * mask
        second_out = torch.tanh(self.refinement(torch.cat((second_masked_img, mask), 1)))
        return first_out, second_out


class PatchDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = nn.Conv2d(4, 1, 3, stride=2, padding=1)

    def forward(self, img, mask):
        return self.block(torch.cat((img, mask), 1))


def Trainer(epochs=1, lr_g=1e-4, lr_d=1e-4, lambda_l1=10.0, lambda_perceptual=1.0):
    generator = GatedGenerator()
    discriminator = PatchDiscriminator()
    perceptualnet = nn.Conv2d(3, 4, 3, padding=1).requires_grad_(False)
    optimizer_g1 = torch.optim.Adam(generator.coarse.parameters(), lr=lr_g)
    optimizer_g = torch.optim.Adam(generator.parameters(), lr=lr_g)
    optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=lr_d)
    L1Loss = nn.L1Loss()
    dataloader = [(torch.rand(2, 3, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float())]

    for epoch in range(epochs):
        for batch_idx, (img, mask) in enumerate(dataloader):
            # Generator output
            first_out, second_out = generator(img, mask)
            first_out_wholeimg = img * (1 - mask) + first_out * mask
            second_out_wholeimg = img * (1 - mask) + second_out * mask

            # Train discriminator
            optimizer_d.zero_grad()
            fake_scalar = discriminator(second_out_wholeimg.detach(), mask)
            true_scalar = discriminator(img, mask)
            loss_D = torch.mean(fake_scalar) - torch.mean(true_scalar)
            loss_D.backward()
            optimizer_d.step()

            # Train generator: the coarse stage first
            optimizer_g1.zero_grad()
            first_MaskL1Loss = L1Loss(first_out_wholeimg, img)
            first_MaskL1Loss.backward(retain_graph=True)
            optimizer_g1.step()  # expect: ADL003

            optimizer_g.zero_grad()
            second_MaskL1Loss = L1Loss(second_out_wholeimg, img)
            fake_scalar = discriminator(second_out_wholeimg, mask)
            GAN_Loss = -torch.mean(fake_scalar)
            second_PerceptualLoss = L1Loss(perceptualnet(second_out_wholeimg), perceptualnet(img))
            loss = (0.5 * lambda_l1 * first_MaskL1Loss + lambda_l1 * second_MaskL1Loss + GAN_Loss
                    + second_PerceptualLoss * lambda_perceptual)
            loss.backward()
            optimizer_g.step()


def run():
    torch.manual_seed(0)
    Trainer()
