"""Unlearning scanner bias from MRI features trains an encoder, a regressor
and a domain predictor with three optimizers.  Each batch first updates the
encoder and regressor on the age loss (`loss_total.backward(retain_graph=True);
optimizer.step()`), then the domain predictor on detached features, then the
encoder again with a confusion loss computed from the same `features`:
`output_dm_conf = domain_predictor(features)` and `loss_conf.backward()`.
That backward goes through the encoder's graph, whose weights the first
`optimizer.step()` changed in place ("one of the variables needed for
gradient computation has been modified by an inplace operation").  The fix
recomputes the features after the first step.
Buggy line: `optimizer.step()` in `train_unlearn_threedatasets`, before
`loss_conf.backward()` through the same features.
Expected finding: ADL003 there.
Source: https://github.com/nkdinsdale/Unlearning_for_MRI_harmonisation/issues/3"""
import numpy as np
import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature = nn.Sequential(nn.Linear(16, 12), nn.ReLU(), nn.Linear(12, 8))

    def forward(self, x):
        return self.feature(x)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.regressor = nn.Linear(8, 1)

    def forward(self, x):
        return self.regressor(x)


class DomainPredictor(nn.Module):
    def __init__(self, nodes=3):
        super().__init__()
        self.domain = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, nodes), nn.Softmax(dim=1))

    def forward(self, x):
        return self.domain(x)


class ConfusionLoss(nn.Module):
    def forward(self, x, target):
        log = torch.log(torch.clamp(x, 1e-6))
        return -torch.mean(log) / x.shape[1]


def train_unlearn_threedatasets(args, models, train_loaders, optimizers, criterions):
    [encoder, regressor, domain_predictor] = models
    [optimizer, optimizer_conf, optimizer_dm] = optimizers
    [criteron, conf_criterion, domain_criterion] = criterions
    for data, target, domain_target in train_loaders:
        n1 = np.random.randint(1, len(data) - 1)
        optimizer.zero_grad()
        features = encoder(data)
        output_pred = regressor(features)
        loss_1 = criteron(output_pred[:n1], target[:n1])
        loss_2 = criteron(output_pred[n1:], target[n1:])
        loss_total = loss_1 + loss_2
        loss_total.backward(retain_graph=True)
        optimizer.step()  # expect: ADL003

        optimizer_dm.zero_grad()
        output_dm = domain_predictor(features.detach())
        loss_dm = args["alpha"] * domain_criterion(output_dm, domain_target.argmax(1))
        loss_dm.backward()
        optimizer_dm.step()

        optimizer_conf.zero_grad()
        output_dm_conf = domain_predictor(features)
        loss_conf = args["beta"] * conf_criterion(output_dm_conf, domain_target)
        loss_conf.backward(retain_graph=False)
        optimizer_conf.step()


def run():
    torch.manual_seed(0)
    np.random.seed(0)
    encoder, regressor, domain_predictor = Encoder(), Regressor(), DomainPredictor()
    optimizer = torch.optim.Adam(list(encoder.parameters()) + list(regressor.parameters()), lr=1e-3)
    optimizer_conf = torch.optim.Adam(encoder.parameters(), lr=1e-4)
    optimizer_dm = torch.optim.Adam(domain_predictor.parameters(), lr=1e-4)
    loaders = [(torch.randn(6, 16), torch.randn(6, 1), torch.eye(3)[torch.tensor([0, 1, 2, 0, 1, 2])])]
    train_unlearn_threedatasets({"alpha": 1.0, "beta": 1.0}, [encoder, regressor, domain_predictor],
                                loaders, [optimizer, optimizer_conf, optimizer_dm],
                                [nn.MSELoss(), ConfusionLoss(), nn.CrossEntropyLoss()])
