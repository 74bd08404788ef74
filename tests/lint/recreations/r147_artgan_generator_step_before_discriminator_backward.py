"""Adaptive style transfer (a PyTorch port of "A Style-Aware Content Loss
for Real-time HD Style Transfer"): `ArtGAN.update()` runs the discriminator
on the stylised output once and hands the predictions to both updates.
`gen_update()` backpropagates the generator loss with `retain_graph=True`
and steps the generator's optimizer; `dis_update()` then backpropagates the
discriminator loss on the same predictions, back through the encoder and
decoder whose weights the step changed in place, and fails ("modified by
an inplace operation").
Source: https://github.com/zhai-xiao/adaptive-style-transfer-pytorch/issues/4"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, ch, 3, padding=1)
        self.norm1 = nn.InstanceNorm2d(ch, affine=True)
        self.conv2 = nn.Conv2d(ch, ch, 3, stride=2, padding=1)

    def forward(self, x):
        return F.relu(self.conv2(F.relu(self.norm1(self.conv1(x)))))


class Decoder(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.up = nn.ConvTranspose2d(ch, ch, 2, stride=2)
        self.out = nn.Conv2d(ch, 3, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.out(F.relu(self.up(x)))) * 2. - 1.


class Discriminator(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.conv0 = nn.Conv2d(3, ch, 3, stride=2, padding=1)
        self.pred_1 = nn.Conv2d(ch, 1, 1)
        self.conv1 = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.pred_2 = nn.Conv2d(ch, 1, 1)

    def forward(self, x):
        h0 = F.leaky_relu(self.conv0(x), 0.2)
        h1 = F.leaky_relu(self.conv1(h0), 0.2)
        return {"pred_1": self.pred_1(h0), "pred_2": self.pred_2(h1)}


class ArtGAN(nn.Module):
    def __init__(self, options):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Decoder()
        self.discriminator = Discriminator()
        self.discriminator_weight = {"pred_1": 1., "pred_2": 1.}
        self.loss = nn.BCEWithLogitsLoss(reduction='mean')
        self.mse = nn.MSELoss(reduction='mean')
        self.abs = nn.L1Loss(reduction='mean')
        dis_params = list(self.discriminator.parameters())
        gen_params = list(self.encoder.parameters()) + list(self.decoder.parameters())
        self.dis_opt = torch.optim.Adam([p for p in dis_params if p.requires_grad], lr=options.lr, betas=(0.5, 0.999))
        self.gen_opt = torch.optim.Adam([p for p in gen_params if p.requires_grad], lr=options.lr, betas=(0.5, 0.999))

    def gen_update(self, batch_content, batch_output, batch_output_preds, options):
        gener_loss = sum([self.loss(pred, torch.ones_like(pred)) * self.discriminator_weight[key]
                          for key, pred in zip(batch_output_preds.keys(), batch_output_preds.values())])
        img_loss = self.mse(F.avg_pool2d(batch_output, kernel_size=2, stride=1),
                            F.avg_pool2d(batch_content, kernel_size=2, stride=1))
        feature_loss = self.abs(self.encoder(batch_output), self.encoder(batch_content))
        self.gener_loss = options.discr_loss_weight * gener_loss + img_loss + feature_loss
        self.gener_loss.backward(retain_graph=True)
        self.gen_opt.step()  # expect: ADL003

    def dis_update(self, batch_art_preds, batch_content_preds, batch_output_preds, options):
        art_loss = sum([self.loss(pred, torch.ones_like(pred)) for pred in batch_art_preds.values()])
        content_loss = sum([self.loss(pred, torch.zeros_like(pred)) for pred in batch_content_preds.values()])
        output_loss = sum([self.loss(pred, torch.zeros_like(pred)) for pred in batch_output_preds.values()])
        self.discr_loss = options.discr_loss_weight * (art_loss + content_loss + output_loss)
        self.discr_loss.backward()
        self.dis_opt.step()

    def update(self, batch_art, batch_content, options, update_generator):
        self.dis_opt.zero_grad()
        self.gen_opt.zero_grad()
        batch_output = self.decoder(self.encoder(batch_content))
        batch_output_preds = self.discriminator(batch_output)
        batch_art_preds = self.discriminator(batch_art)
        batch_content_preds = self.discriminator(batch_content)
        if update_generator:
            self.gen_update(batch_content, batch_output, batch_output_preds, options)
        self.dis_update(batch_art_preds, batch_content_preds, batch_output_preds, options)


def run():
    torch.manual_seed(0)
    options = SimpleNamespace(lr=2e-4, discr_loss_weight=1.0)
    trainer = ArtGAN(options)
    for _ in range(2):
        trainer.update(torch.rand(2, 3, 8, 8), torch.rand(2, 3, 8, 8), options, update_generator=True)
