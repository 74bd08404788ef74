"""Federated learning, FedProx client (FL-bench): before local training the client keeps the global
model's parameters to compute the proximal term's gradient, `mu * (w - w_t)`, added to each
parameter's gradient. It keeps them with `global_params = list(self.model.parameters())`: the same
tensors as the model's, which the local steps update, so `w.data - w_t.data` is always zero and the
proximal term is silently missing (FedProx trains as FedAvg).
Source: https://github.com/KarhouTam/FL-bench/issues/165 ("FedProx Proximal Term Being Zero
Caused by Shallow Copy"; fix: `global_params = [w.clone().detach() for w in
self.model.parameters()]`).
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FedProxClient:
    def __init__(self, data, targets, mu=0.5, local_epoch=3):
        self.data, self.targets = data, targets
        self.mu, self.local_epoch = mu, local_epoch

    def fit(self, global_model):
        self.model = copy.deepcopy(global_model)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.2)
        self.model.train()
        global_params = list(self.model.parameters())
        for _ in range(self.local_epoch):
            for x, y in zip(self.data.split(8), self.targets.split(8)):
                loss = F.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                for w, w_t in zip(self.model.parameters(), global_params):
                    if w.requires_grad:
                        w.grad.data += self.mu * (w.data - w_t.data)
                self.optimizer.step()
        return [p.detach().clone() for p in self.model.parameters()]


global_model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
clients = []
for shift in (-1.0, 0.0, 1.5):
    x = torch.randn(16, 4) + shift
    clients.append(FedProxClient(x, (x.sum(dim=1) > shift * 4).long() + (shift > 0)))

for round_index in range(2):
    client_params = [client.fit(global_model) for client in clients]
    with torch.no_grad():
        for index, p in enumerate(global_model.parameters()):
            p.copy_(torch.stack([params[index] for params in client_params]).mean(dim=0))
result = {"global_params": [p.detach().clone() for p in global_model.parameters()]}
