"""Semi-supervised segmentation GAN (semanticGAN): an image discriminator and a segmentation
discriminator are trained in turn, each with `requires_grad(...)` toggles. The lazy R1
regularization of the image discriminator runs after the segmentation discriminator's step,
while `requires_grad(discriminator_img, False)` is still in force: the R1 loss reaches no
parameter of the image discriminator, and `d_img_optim.step()` changes nothing (no error).
Source: https://github.com/nv-tlabs/semanticGAN_code/issues/25 ("Is requires_grad(discriminator_img,
False) infection dimg regulation"; maintainer: "it makes sense to enable the gradient for both
discriminators in the regularization, this might be a mistake when we refactor the codebase").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)
Z, IMG, SEG = 4, 12, 3


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def d_r1_loss(real_pred, real_img):
    grad_real, = autograd.grad(outputs=real_pred.sum(), inputs=real_img, create_graph=True)
    return grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()


generator = nn.Sequential(nn.Linear(Z, 16), nn.ReLU(), nn.Linear(16, IMG + SEG))
discriminator_img = nn.Sequential(nn.Linear(IMG, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
discriminator_seg = nn.Sequential(nn.Linear(IMG + SEG, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
d_img_optim = torch.optim.Adam(discriminator_img.parameters(), lr=1e-2)
d_seg_optim = torch.optim.Adam(discriminator_seg.parameters(), lr=1e-2)
r1, d_reg_every = 10.0, 2
real_img_batch = torch.randn(8, IMG)
real_seg_batch = torch.softmax(torch.randn(8, SEG), dim=-1)
r1_losses = []
for i in range(3):
    real_img = real_img_batch.clone()
    # Train the image discriminator.
    requires_grad(generator, False)
    requires_grad(discriminator_img, True)
    requires_grad(discriminator_seg, False)
    fake_img = generator(torch.randn(8, Z))[:, :IMG]
    d_img_loss = F.softplus(discriminator_img(fake_img)).mean() + F.softplus(-discriminator_img(real_img)).mean()
    discriminator_img.zero_grad()
    d_img_loss.backward()
    d_img_optim.step()
    # Train the segmentation discriminator.
    requires_grad(generator, False)
    requires_grad(discriminator_img, False)
    requires_grad(discriminator_seg, True)
    fake = generator(torch.randn(8, Z))
    fake = torch.cat((fake[:, :IMG], torch.softmax(fake[:, IMG:], dim=-1)), dim=-1)
    real = torch.cat((real_img, real_seg_batch), dim=-1)
    d_seg_loss = F.softplus(discriminator_seg(fake)).mean() + F.softplus(-discriminator_seg(real)).mean()
    discriminator_seg.zero_grad()
    d_seg_loss.backward()
    d_seg_optim.step()
    d_regularize = i % d_reg_every == 0
    if d_regularize:
        requires_grad(discriminator_img, True)
        real_img.requires_grad = True
        real_pred = discriminator_img(real_img)
        r1_img_loss = d_r1_loss(real_pred, real_img)
        discriminator_img.zero_grad()
        (r1 / 2 * r1_img_loss * d_reg_every + 0 * real_pred[0]).backward()
        d_img_optim.step()
        r1_losses.append(r1_img_loss.detach())
result = {"r1": r1_losses, "d_img": [p.detach().clone() for p in discriminator_img.parameters()],
          "d_seg": [p.detach().clone() for p in discriminator_seg.parameters()]}
