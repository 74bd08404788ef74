"""PySyft's `federated_avg` with the sum held by a new model instance, so no client's model is
overwritten or shared with the server (the fix of PR 3614).
Source: https://github.com/OpenMined/PySyft/issues/3613, fixed in
https://github.com/OpenMined/PySyft/pull/3614."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLIENTS, ROUNDS, LOCAL_STEPS = 3, 3, 2


def add_model(dst_model, src_model):
    with torch.no_grad():
        for dst, src in zip(dst_model.parameters(), src_model.parameters()):
            dst.add_(src)
    return dst_model


def scale_model(model, scale):
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.mul_(scale)
    return model


def federated_avg(models):
    model = copy.deepcopy(models[0])
    for other in models[1:]:
        model = add_model(model, other)
    return scale_model(model, 1.0 / len(models))


def local_train(model, data, labels):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(LOCAL_STEPS):
        optimizer.zero_grad()
        F.cross_entropy(model(data), labels).backward()
        optimizer.step()


global_model = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 2))
clients = [copy.deepcopy(global_model) for _ in range(CLIENTS)]
client_data = [(torch.randn(20, 5), torch.randint(0, 2, (20,))) for _ in range(CLIENTS)]
history = []
for round_index in range(ROUNDS):
    for client, (data, labels) in zip(clients, client_data):
        client.load_state_dict(global_model.state_dict())
        local_train(client, data, labels)
    global_model = federated_avg(clients)
    history.append([p.detach().clone() for p in global_model.parameters()])

result = {"global_per_round": history}
