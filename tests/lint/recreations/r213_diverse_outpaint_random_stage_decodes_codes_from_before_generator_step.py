"""Diverse outpainting trains in two stages per batch: a "centroid" stage
and a "random" stage, both decoding the encoder's `codes, feats =
encoder(low)`, computed once at the top of the iteration.  The centroid
stage ends with `total_loss.backward(retain_graph=True)` and
`G_optimizer.step()`, which updates the encoder and the decoder; the random
stage then decodes the same `codes` and `feats` and backpropagates through
them into the encoder, whose weights the step has changed, and fails ("one
of the variables needed for gradient computation has been modified by an
inplace operation: [torch.cuda.FloatTensor [512, 512, 4, 4]] is at version
2; expected version 1").  The fix encodes again after the step.
Buggy line: the centroid stage's `G_optimizer.step()`.
Expected finding: ADL003 there.
Source: https://github.com/owenzlz/DiverseOutpaint/issues/2"""
import torch
from torch import nn, optim


class Encoder(nn.Module):
    def __init__(self, code_dim=4):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(4 * 2 * 2, code_dim)

    def forward(self, x):
        f1 = torch.relu(self.conv1(x))
        f2 = torch.relu(self.conv2(f1))
        return self.fc(f2.flatten(1)), [f1, f2]


class Decoder(nn.Module):
    def __init__(self, code_dim=4, noise_dim=2):
        super().__init__()
        self.fc = nn.Linear(code_dim + noise_dim, 4 * 2 * 2)
        self.up1 = nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1)
        self.up2 = nn.ConvTranspose2d(8, 3, 4, stride=2, padding=1)

    def forward(self, code, feats):
        h = self.fc(code).view(-1, 4, 2, 2)
        h = torch.relu(self.up1(torch.cat([h, feats[1]], 1)))
        return torch.tanh(self.up2(torch.cat([h, feats[0]], 1)))


class PatchDiscriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 4))

    def forward(self, x):
        return self.main(x).view(-1)


def sampling(codes, num_sample, noise_dim):
    noises = torch.randn(codes.size(0) * num_sample, noise_dim)
    repeated = codes.repeat_interleave(num_sample, 0)
    return torch.cat([repeated, noises], 1), noises


def collapse(feats, num_sample):
    return [f.repeat_interleave(num_sample, 0) for f in feats]


def train(loader, num_sample=2, noise_dim=2):
    encoder, decoder, discriminator = Encoder(), Decoder(noise_dim=noise_dim), PatchDiscriminator()
    G_optimizer = optim.Adam([{'params': encoder.parameters()}, {'params': decoder.parameters()}], lr=2e-4)
    D_optimizer = optim.Adam(discriminator.parameters(), lr=2e-4)
    bce = nn.BCEWithLogitsLoss()
    for high, mask in loader:
        low = high * mask
        codes, feats = encoder(low)

        # centroid sample
        diverse_codes, _ = sampling(codes, num_sample, noise_dim)
        high_hat = decoder(diverse_codes, collapse(feats, num_sample))
        high_rep = high.repeat_interleave(num_sample, 0)
        mask_rep = mask.repeat_interleave(num_sample, 0)
        high_center_hat = (1 - mask_rep) * high_hat + mask_rep * high_rep

        D_loss = bce(discriminator(high), torch.ones(high.size(0))) + bce(discriminator(high_center_hat.detach()), torch.zeros(high_center_hat.size(0)))
        D_optimizer.zero_grad()
        D_loss.backward()
        D_optimizer.step()

        high_recon = nn.functional.mse_loss(high_center_hat, high_rep)
        G_loss = bce(discriminator(high_center_hat), torch.ones(high_center_hat.size(0)))
        total_loss = G_loss + high_recon
        G_optimizer.zero_grad()
        total_loss.backward(retain_graph=True)
        G_optimizer.step()  # expect: ADL003

        # random sample
        diverse_codes, noises = sampling(codes, num_sample, noise_dim)
        high_hat = decoder(diverse_codes, collapse(feats, num_sample))
        high_hat = (1 - mask_rep) * high_hat + mask_rep * high_rep

        D_loss = bce(discriminator(high), torch.ones(high.size(0))) + bce(discriminator(high_hat.detach()), torch.zeros(high_hat.size(0)))
        D_optimizer.zero_grad()
        D_loss.backward()
        D_optimizer.step()

        G_loss = bce(discriminator(high_hat), torch.ones(high_hat.size(0)))
        pair_div_loss = -torch.pdist(high_hat.flatten(1)).mean()
        total_loss = G_loss + 0.5 * pair_div_loss
        G_optimizer.zero_grad()
        total_loss.backward()
        G_optimizer.step()


def run():
    torch.manual_seed(0)
    mask = torch.ones(2, 1, 8, 8)
    mask[:, :, 2:6, 2:6] = 0
    train([(torch.rand(2, 3, 8, 8) * 2 - 1, mask)])
