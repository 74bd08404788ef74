"""PySyft's `utils.federated_avg(models)`: it starts the average with `model = model_list[0]` and
adds every other client's parameters into it in place (under `no_grad`), then scales by 1/N. The
"average" is the first client's own model object: its local weights are overwritten, and from
then on the server's global model and client 0's model are one module, so client 0's next local
training moves the global model directly. Every round's global weights are wrong, and nothing is
raised.
Source: https://github.com/OpenMined/PySyft/issues/3613 ("Side Effect at federated_avg": "When the
function does `model = model_list[0]`, the reference of `model_list[0]` still connect to it"),
fixed in https://github.com/OpenMined/PySyft/pull/3614 (a new model instance holds the sum).
expect: silent"""
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
    model = models[0]
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
