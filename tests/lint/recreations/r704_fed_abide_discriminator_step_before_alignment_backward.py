"""Fed_ABIDE (federated domain adaptation on fMRI), issue 2: running `federated_align.py`
raises at `lossG.backward(retain_graph=True)`: "one of the variables needed for gradient
computation has been modified by an inplace operation: [torch.cuda.FloatTensor [4, 1]], which
is output 0 of TBackward, is at version 2; expected version 1".  In the alignment stage, for
every pair of sites (i, j), `d1 = discriminators[i](fs[i] + noises[i])` and `d2 =
discriminators[i](fs[j] + noises[j])` give both the discriminator's loss and the encoders'
("generator") loss; the code backpropagates `lossD`, steps `optimizerDs[i]` (which changes the
discriminator's weights in place), and then backpropagates `lossG` through the same `d1, d2`,
whose graph saved those weights.  (Answers suggested pinning torch 1.1; the cause is the order:
the generator loss needs its backward before the discriminator's step, or a fresh forward.)
Re-created in my own words with four sites' models and optimizers kept in lists and dicts, as
the script does, small MLP encoders, per-site discriminators and random batches.
Buggy line: `optimizerDs[i].step()` before `lossG.backward(retain_graph=True)`.
Source: https://github.com/xxlya/Fed_ABIDE/issues/2"""
import torch
import torch.distributions as tdist
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, in_dim, dim, n_class):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, dim), nn.Tanh())
        self.classifier = nn.Linear(dim, n_class)

    def forward(self, x):
        return self.classifier(self.encoder(x))


class Discriminator(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


def advDloss(d1, d2):
    return -torch.log(d1).mean() - torch.log(1 - d2).mean()


def advGloss(d1, d2):
    res = -torch.log(d1).mean() - torch.log(d2).mean()
    return res.mean()


def run():
    torch.manual_seed(0)
    in_dim, dim, sites = 10, 4, 4
    models = [Classifier(in_dim, dim, 2) for _ in range(sites)]
    optimizers = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in models]
    optimizerGs = [torch.optim.Adam(m.encoder.parameters(), lr=1e-3) for m in models]
    discriminators, optimizerDs = dict(), dict()
    for i in range(sites):
        discriminators[i] = Discriminator(dim)
        optimizerDs[i] = torch.optim.Adam(discriminators[i].parameters(), lr=1e-3)
    celoss = nn.CrossEntropyLoss()
    data = [(torch.randn(6, in_dim), torch.randint(0, 2, (6,))) for _ in range(sites)]
    fs = []
    for i in range(sites):
        optimizers[i].zero_grad()
        a, b = data[i]
        loss = celoss(models[i](a), b)
        loss.backward(retain_graph=True)
        optimizers[i].step()
        fs.append(models[i].encoder(a))
    noises = []
    for i in range(sites):
        nn_dist = tdist.Normal(torch.tensor([0.0]), 0.001 * torch.std(fs[i].detach()))
        noises.append(nn_dist.sample(fs[i].size()).squeeze(-1))
    for i in range(sites):
        for j in range(sites):
            if i != j:
                optimizerDs[i].zero_grad()
                optimizerGs[i].zero_grad()
                optimizerGs[j].zero_grad()
                d1 = discriminators[i](fs[i] + noises[i])
                d2 = discriminators[i](fs[j] + noises[j])
                lossD = advDloss(d1, d2)
                lossG = advGloss(d1, d2)
                lossD = 0.1 * lossD
                lossD.backward(retain_graph=True)
                optimizerDs[i].step()  # expect: ADL003
                lossG.backward(retain_graph=True)
                optimizerGs[i].step()
                optimizerGs[j].step()
