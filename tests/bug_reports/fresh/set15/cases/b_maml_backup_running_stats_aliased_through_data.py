"""MAML++ (How to train your MAML): its meta batch-norm layer keeps running statistics and, before
an evaluation task adapts the network, backs them up with
`self.backup_running_mean.data = copy(self.running_mean.data)` so that they can be restored
afterwards. `copy.copy` of a tensor shares its storage: the backup is the running statistics
themselves, the evaluation task's batches update both, and the "restore" puts the evaluation
statistics back into the model used for the next training step. Nothing is raised; the
evaluation data leaks into training.
Source: https://github.com/AntreasAntoniou/HowToTrainYourMAMLPytorch/issues/42 ("Backup running
statistics is incorrect": the backup and the running statistics end up tied; "You simply need to
use `deepcopy` instead").
expect: silent"""
from copy import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FEATURES, CLASSES, INNER_LR = 6, 3, 0.4


class MetaBatchNormLayer(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.ones(features))
        self.register_buffer("backup_running_mean", torch.zeros(features))
        self.register_buffer("backup_running_var", torch.ones(features))

    def forward(self, x, backup_running_statistics=False):
        if backup_running_statistics:
            self.backup_running_mean.data = copy(self.running_mean.data)
            self.backup_running_var.data = copy(self.running_var.data)
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            training=True, momentum=0.5)

    def restore_backup_stats(self):
        self.running_mean.copy_(self.backup_running_mean)
        self.running_var.copy_(self.backup_running_var)


class MetaNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        self.norm = MetaBatchNormLayer(FEATURES)
        self.head = nn.Linear(FEATURES, CLASSES)

    def forward(self, x, weights=None, backup_running_statistics=False):
        w = weights if weights is not None else dict(self.named_parameters())
        h = F.linear(x, w["linear.weight"], w["linear.bias"])
        h = self.norm(h, backup_running_statistics)
        return F.linear(F.relu(h), w["head.weight"], w["head.bias"])


def adapted_query_loss(model, support, query, backup=False):
    (xs, ys), (xq, yq) = support, query
    weights = dict(model.named_parameters())
    support_loss = F.cross_entropy(model(xs, weights, backup_running_statistics=backup), ys)
    grads = torch.autograd.grad(support_loss, list(weights.values()), create_graph=True)
    fast = {name: w - INNER_LR * g for (name, w), g in zip(weights.items(), grads)}
    return F.cross_entropy(model(xq, fast), yq)


def task(shift):
    return ((torch.randn(10, FEATURES) + shift, torch.randint(0, CLASSES, (10,))),
            (torch.randn(10, FEATURES) + shift, torch.randint(0, CLASSES, (10,))))


model = MetaNet()
meta_optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
train_tasks = [task(0.0) for _ in range(3)]
evaluation_task = task(3.0)
losses = []
for train_task in train_tasks:
    meta_optimizer.zero_grad()
    loss = adapted_query_loss(model, *train_task)
    loss.backward()
    meta_optimizer.step()
    losses.append(loss.detach())
    evaluation_loss = adapted_query_loss(model, *evaluation_task, backup=True)
    model.norm.restore_backup_stats()
    losses.append(evaluation_loss.detach())

result = {"losses": torch.stack(losses), "running_mean": model.norm.running_mean.clone(),
          "running_var": model.norm.running_var.clone(), "params": [p.detach().clone() for p in model.parameters()]}
