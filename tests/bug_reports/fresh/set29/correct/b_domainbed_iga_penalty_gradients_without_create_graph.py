"""DomainBed, domain generalisation: the IGA algorithm (Inter-environmental Gradient Alignment)
adds to the mean loss a penalty on how far each environment's gradient is from the mean gradient,
`sum_e ||g_e - mean_g||^2`, so that the network is pushed towards parameters where the
environments agree. `update()` computes the gradients with
`autograd.grad(..., retain_graph=True)` but without `create_graph=True`, so the gradients are
plain tensors with no graph: the penalty has a value (it is logged) but no path back to the
parameters, and `(mean_loss + penalty * penalty_value).backward()` trains on the mean loss
alone. Nothing raises; the `penalty` hyper-parameter has no effect on training. Reported in the
issue (with `(penalty * penalty_value).backward()` alone it fails with "element 0 of tensors does
not require grad"); the maintainers' fix adds `create_graph=True` to both `autograd.grad` calls.
Source: https://github.com/facebookresearch/DomainBed/issues/50
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


class Algorithm(nn.Module):
    def __init__(self, input_shape, num_classes, num_domains, hparams):
        super().__init__()
        self.hparams = hparams


class ERM(Algorithm):
    def __init__(self, input_shape, num_classes, num_domains, hparams):
        super().__init__(input_shape, num_classes, num_domains, hparams)
        self.featurizer = nn.Sequential(nn.Linear(input_shape[0], 32), nn.Tanh(), nn.Linear(32, 16), nn.Tanh())
        self.classifier = nn.Linear(16, num_classes)
        self.network = nn.Sequential(self.featurizer, self.classifier)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=hparams["lr"],
                                          weight_decay=hparams["weight_decay"])

    def predict(self, x):
        return self.network(x)


class IGA(ERM):
    """Inter-environmental Gradient Alignment, from https://arxiv.org/abs/2008.01883v2"""

    def update(self, minibatches, unlabeled=None):
        total_loss = 0
        grads = []
        for i, (x, y) in enumerate(minibatches):
            logits = self.network(x)
            env_loss = F.cross_entropy(logits, y)
            total_loss += env_loss
            grads.append( autograd.grad(env_loss, self.network.parameters(), retain_graph=True, create_graph=True) )

        mean_loss = total_loss / len(minibatches)
        mean_grad = autograd.grad(mean_loss, self.network.parameters(), retain_graph=True, create_graph=True)

        # compute trace penalty
        penalty_value = 0
        for grad in grads:
            for g, mean_g in zip(grad, mean_grad):
                penalty_value += (g - mean_g).pow(2).sum()

        self.optimizer.zero_grad()
        (mean_loss + self.hparams['penalty'] * penalty_value).backward()
        self.optimizer.step()

        return {'loss': mean_loss.item(), 'penalty': penalty_value.item()}


def make_environment(n, spurious_strength):
    """A linearly separable task with one feature whose correlation with the label changes by
    environment (the spurious feature)."""
    x = torch.randn(n, 6)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    x[:, 5] = spurious_strength * (2 * y.float() - 1) + 0.3 * torch.randn(n)
    return x, y


hparams = {"lr": 1e-2, "weight_decay": 0.0, "penalty": 1000.0}
algorithm = IGA(input_shape=(6,), num_classes=2, num_domains=3, hparams=hparams)
environments = [make_environment(64, s) for s in (0.9, 0.5, -0.3)]
losses, penalties = [], []
for step in range(40):
    stats = algorithm.update(environments)
    losses.append(stats["loss"])
    penalties.append(stats["penalty"])

result = {"loss": torch.tensor(losses), "penalty": torch.tensor(penalties),
          "params": [p.detach().clone() for p in algorithm.network.parameters()]}
