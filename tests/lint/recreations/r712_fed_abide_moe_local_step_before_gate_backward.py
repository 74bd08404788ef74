"""Fed_ABIDE (federated learning on fMRI), `federated_MoE.py` as stored (the same repository as
issue 2, another script with the same ordering): for each site the local model is trained first
-- `loss_local.backward(retain_graph=True)`, `optimizers_local[i].step()` -- and then the
mixture-of-experts model is run on the *same* local output, `output, _ = models[i](a,
outlocal)`, and `loss.backward()` backpropagates through `outlocal` into the local model, whose
weights the step has just changed in place: "one of the variables needed for gradient
computation has been modified by an inplace operation ... output 0 of TBackward".
Re-created in my own words with the four sites' models and optimizers in lists, a local MLP
classifier and a gated MoE (a federated classifier mixed with the local output), random batches.
Buggy line: `optimizers_local[i].step()` before `loss.backward()`.
Source: https://github.com/xxlya/Fed_ABIDE/blob/534d4025093ef34f73e4956f75880b13ddb97ea9/federated_MoE.py"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, in_dim, dim, n_class):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, dim), nn.Tanh(), nn.Linear(dim, n_class))

    def forward(self, x):
        return torch.log_softmax(self.net(x), dim=1)


class MoE(nn.Module):
    def __init__(self, in_dim, dim, n_class):
        super().__init__()
        self.classifier = Classifier(in_dim, dim, n_class)
        self.gate = nn.Sequential(nn.Linear(in_dim, 1), nn.Sigmoid())

    def forward(self, x, local_output):
        a = self.gate(x)
        return torch.log(a * self.classifier(x).exp() + (1 - a) * local_output.exp()), a


def run():
    torch.manual_seed(0)
    in_dim, sites = 10, 4
    models = [MoE(in_dim, 6, 2) for _ in range(sites)]
    optimizers = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in models]
    models_local = [Classifier(in_dim, 4, 2) for _ in range(sites)]
    optimizers_local = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in models_local]
    nnloss = nn.NLLLoss()
    data_iters = [iter([(torch.randn(6, in_dim), torch.randint(0, 2, (6,))) for _ in range(2)]) for _ in range(sites)]
    loss_all, loss_lc = dict(), dict()
    for i in range(sites):
        loss_all[i] = 0
        loss_lc[i] = 0
    for t in range(2):
        for i in range(sites):
            optimizers[i].zero_grad()
            a, b = next(data_iters[i])
            outlocal = models_local[i](a)
            loss_local = nnloss(outlocal, b)
            loss_local.backward(retain_graph=True)
            loss_lc[i] += loss_local.item() * b.size(0)
            optimizers_local[i].step()  # expect: ADL003
            output, _ = models[i](a, outlocal)
            loss = nnloss(output, b)
            loss.backward()
            loss_all[i] += loss.item() * b.size(0)
            optimizers[i].step()
    return loss_all, loss_lc
