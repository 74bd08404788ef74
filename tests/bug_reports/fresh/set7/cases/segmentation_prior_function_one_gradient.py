"""Unsupervised segmentation autoencoder with a spatial prior: a custom `autograd.Function` takes
two inputs (the segmentation logits and a fixed prior) but its `backward` returns one gradient, so
the first backward fails (the model was written for torch 1.1).
Source: https://github.com/evanmy/sae/issues/5 ("function EnforcePriorBackward returned an
incorrect number of gradients (expected 2, got 1)"; the reporter: working after adding `, None` to
the return statement).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_LABELS = 4


class EnforcePrior(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, prior):
        return logits + torch.log(prior + 1e-6)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


encoder = nn.Conv2d(1, N_LABELS, 3, padding=1)
decoder = nn.Conv2d(N_LABELS, 1, 3, padding=1)
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-2)
prior = F.softmax(torch.randn(1, N_LABELS, 12, 12), dim=1)
losses = []
for step in range(3):
    images = torch.rand(2, 1, 12, 12)
    segmentation = F.softmax(EnforcePrior.apply(encoder(images), prior), dim=1)
    reconstruction = decoder(segmentation)
    loss = F.mse_loss(reconstruction, images)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in encoder.parameters()]}
