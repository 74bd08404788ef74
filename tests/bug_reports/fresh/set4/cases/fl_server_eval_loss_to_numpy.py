"""Federated learning server: after aggregating the users' models, `evaluate` weighs each user's
test loss by its number of samples with numpy; the losses still carry their graph
(`requires_grad`), so numpy cannot take them.
Source: https://github.com/zhuangdizhu/FedGen/issues/1 ("Can't call numpy() on Tensor that requires
grad" where the weighted sum is taken with numpy; fix in the thread: `y.detach()` in that
sum).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
global_model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
users = [(torch.randn(n, 5), torch.randint(0, 3, (n,))) for n in (6, 10, 4)]


def local_update(model, data, steps=2):
    local = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    local.load_state_dict(model.state_dict())
    optimizer = torch.optim.SGD(local.parameters(), lr=0.1)
    x, y = data
    for _ in range(steps):
        optimizer.zero_grad()
        F.cross_entropy(local(x), y).backward()
        optimizer.step()
    return local


def aggregate(model, local_models, sizes):
    total = sum(sizes)
    with torch.no_grad():
        for name, param in model.named_parameters():
            param.copy_(sum(dict(m.named_parameters())[name] * (n / total) for m, n in zip(local_models, sizes)))


def user_test(model, data):
    x, y = data
    return F.cross_entropy(model(x), y, reduction="sum"), len(y)


def evaluate(model):
    test_losses, test_samples = [], []
    for data in users:
        loss, n = user_test(model, data)
        test_losses.append(loss)
        test_samples.append(n)
    return np.sum([x * y for (x, y) in zip(test_samples, test_losses)]).item() / np.sum(test_samples)


glob_losses = []
for round_ in range(2):
    local_models = [local_update(global_model, data) for data in users]
    aggregate(global_model, local_models, [len(d[1]) for d in users])
    glob_losses.append(evaluate(global_model))
result = {"glob_losses": torch.tensor(glob_losses), "params": [p.detach() for p in global_model.parameters()]}
