"""Federated averaging with a shared local model (FederatedScope's `share_local_model`: the
server and all simulated clients use one model object, to save memory). Each round the server
broadcasts `model_para = self.model.state_dict()`; each client loads the broadcast content,
trains a few local steps and returns a copy of its trained state; the server averages them.
`state_dict()` returns the model's own tensors, and the clients train that very model in place,
so the broadcast content changes while the clients train: client 2 "loads" client 1's trained
weights and starts from there, and the round is centralized sequential training, not an
average of three clients that all started from the global model. Nothing is raised.
Source: https://github.com/alibaba/FederatedScope/issues/664 ("Share_local_model results in
unexpected behavior": the broadcast content points to the model's state_dict(), which changes as
clients train; fix: `copy.deepcopy` the parameters when broadcasting).
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLIENTS, LOCAL_STEPS, ROUNDS, FEATURES = 3, 4, 3, 5


class Server:
    def __init__(self, model):
        self.model = model

    def broadcast_model_para(self):
        return self.model.state_dict()

    def aggregate(self, updates):
        total = sum(count for count, _ in updates)
        averaged = {key: sum(count * state[key] for count, state in updates) / total
                    for key in updates[0][1]}
        self.model.load_state_dict(averaged)


class Client:
    def __init__(self, model, data, targets):
        self.model, self.data, self.targets = model, data, targets
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(self, model_para):
        self.model.load_state_dict(model_para)
        for _ in range(LOCAL_STEPS):
            loss = F.mse_loss(self.model(self.data), self.targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return len(self.data), copy.deepcopy(self.model.state_dict()), loss.detach()


shared_model = nn.Sequential(nn.Linear(FEATURES, 8), nn.Tanh(), nn.Linear(8, 1))
server = Server(shared_model)
clients = []
for c in range(CLIENTS):
    x = torch.randn(20 + 5 * c, FEATURES)
    clients.append(Client(shared_model, x, (x[:, :1] * (c + 1) - x[:, 1:2]).tanh()))

client_losses = []
for round_index in range(ROUNDS):
    model_para = server.broadcast_model_para()
    updates = []
    for client in clients:
        count, state, loss = client.train(model_para)
        updates.append((count, state))
        client_losses.append(loss)
    server.aggregate(updates)

result = {"client_losses": torch.stack(client_losses),
          "params": [p.detach().clone() for p in server.model.parameters()]}
