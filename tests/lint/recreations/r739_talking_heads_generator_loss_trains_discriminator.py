"""Realistic Neural Talking Head Models (few-shot adversarial learning of talking heads),
`train.py` before commit b7ae5b5 ("Combining losses makes lossADV and lossD cancel each other,
fixed by updating the generator and discriminator separately"): the meta-learning step sums the
discriminator's hinge losses and the generator loss into one `loss`, calls `loss.backward()`
once, and steps both `optimizerG` and `optimizerD`.  The generator loss's adversarial term
`-r_hat.mean()` is computed through the discriminator on the generated frames, so the
discriminator's update also follows the generator's objective: the two terms cancel and the
discriminator is trained to call the fakes real (the "red output" the author saw).
Re-created in my own words with the repository's structure: the embedder `E`, the generator `G`
conditioned on the mean embedding, the projection discriminator `D` with its per-video `W_i`
rows and intermediate feature list, `LossG` (content, adversarial, feature matching and the
embedding match term), the hinge `LossDfake`/`LossDreal`, and the epoch loop with its second
discriminator pass on the detached fakes.
Nothing raises: `bug_shows()` shows the discriminator's weights after one step differing from
those of the step the fix makes (the discriminator trained on its own loss only).
Buggy line: `optimizerD.step()` after the backward of the combined loss.
Source: https://github.com/vincent-thevenin/Realistic-Neural-Talking-Head-Models/blob/1c5b7ae38b8da5ef47850d7e05e35427aa5729bd/train.py"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(6, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(8, 16)

    def forward(self, frame, landmarks):
        out = self.conv(torch.cat([frame, landmarks], dim=1)).flatten(1)
        return self.fc(out).unsqueeze(-1)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.psi = nn.Linear(16, 8)
        self.conv_in = nn.Conv2d(3, 8, 3, padding=1)
        self.conv_out = nn.Conv2d(8, 3, 3, padding=1)

    def forward(self, landmarks, e_hat):
        style = self.psi(e_hat.squeeze(-1)).unsqueeze(-1).unsqueeze(-1)
        out = F.relu(self.conv_in(landmarks) * style)
        return torch.sigmoid(self.conv_out(out))


class Discriminator(nn.Module):
    def __init__(self, num_videos):
        super().__init__()
        self.block1 = nn.Conv2d(6, 8, 3, stride=2, padding=1)
        self.block2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.W_i = nn.Parameter(torch.rand(16, num_videos))
        self.w_0 = nn.Parameter(torch.randn(16, 1))
        self.b = nn.Parameter(torch.zeros(1))

    def forward(self, x, landmarks, i):
        out1 = F.leaky_relu(self.block1(torch.cat([x, landmarks], dim=1)), 0.2)
        out2 = F.leaky_relu(self.block2(out1), 0.2)
        pooled = out2.mean(dim=(2, 3))
        w = (self.W_i[:, i] + self.w_0).t()
        score = (pooled * w).sum(dim=1) + self.b
        return score, [out1, out2]


class LossG(nn.Module):
    def forward(self, x, x_hat, r_hat, D_res_list, D_hat_res_list, e_vectors, W, i):
        loss_cnt = F.l1_loss(x_hat, x)
        loss_adv = -r_hat.mean() + sum(F.l1_loss(a, b.detach()) for a, b in zip(D_hat_res_list, D_res_list))
        loss_mch = F.l1_loss(W[:, i].t(), e_vectors.mean(dim=1).squeeze(-1))
        return loss_cnt + loss_adv + 80 * loss_mch


class LossDfake(nn.Module):
    def forward(self, r_hat):
        return F.relu(1.0 + r_hat).mean()


class LossDreal(nn.Module):
    def forward(self, r):
        return F.relu(1.0 - r).mean()


def make_models():
    torch.manual_seed(0)
    return Embedder(), Generator(), Discriminator(num_videos=4)


def train(E, G, D, combined, num_epochs=1):
    optimizerG = torch.optim.Adam(params=list(E.parameters()) + list(G.parameters()), lr=5e-5)
    optimizerD = torch.optim.Adam(params=D.parameters(), lr=2e-4)
    criterionG, criterionDfake, criterionDreal = LossG(), LossDfake(), LossDreal()
    generator = torch.Generator().manual_seed(1)
    dataLoader = [(torch.rand(2, 3, 2, 3, 8, 8, generator=generator), torch.rand(2, 3, 8, 8, generator=generator),
                   torch.rand(2, 3, 8, 8, generator=generator), torch.tensor([0, 2]))]
    for epoch in range(num_epochs):
        for i_batch, (f_lm, x, g_y, i) in enumerate(dataLoader):
            optimizerG.zero_grad()
            optimizerD.zero_grad()

            f_lm_compact = f_lm.view(-1, f_lm.shape[-4], f_lm.shape[-3], f_lm.shape[-2], f_lm.shape[-1])
            e_vectors = E(f_lm_compact[:, 0, :, :, :], f_lm_compact[:, 1, :, :, :])
            e_vectors = e_vectors.view(-1, f_lm.shape[1], 16, 1)
            e_hat = e_vectors.mean(dim=1)

            x_hat = G(g_y, e_hat)
            r_hat, D_hat_res_list = D(x_hat, g_y, i)
            r, D_res_list = D(x, g_y, i)

            lossG = criterionG(x, x_hat, r_hat, D_res_list, D_hat_res_list, e_vectors, D.W_i, i)
            lossDfake = criterionDfake(r_hat)
            lossDreal = criterionDreal(r)

            if combined:
                loss = lossDreal + lossDfake + lossG
                loss.backward(retain_graph=False)
                optimizerG.step()
                optimizerD.step()  # missed: ADL024 (no `D(fake.detach())` call; the later pass detaches in place)
            else:
                lossG.backward(retain_graph=False)
                optimizerG.step()

            # train D again
            optimizerG.zero_grad()
            optimizerD.zero_grad()
            x_hat.detach_()
            r_hat, D_hat_res_list = D(x_hat, g_y, i)
            r, D_res_list = D(x, g_y, i)

            lossDfake = criterionDfake(r_hat)
            lossDreal = criterionDreal(r)

            lossD = lossDreal + lossDfake
            lossD.backward(retain_graph=False)
            optimizerD.step()
    return D


def run():
    E, G, D = make_models()
    return train(E, G, D, combined=True)


def bug_shows():
    E, G, D = make_models()
    as_written = train(copy.deepcopy(E), copy.deepcopy(G), copy.deepcopy(D), combined=True)
    separate = train(E, G, D, combined=False)
    return any(not torch.allclose(a, b) for a, b in zip(as_written.parameters(), separate.parameters()))
