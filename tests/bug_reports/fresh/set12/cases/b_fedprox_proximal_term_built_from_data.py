"""FedShare (federated learning with a shared dataset), FedProx client update: after the first
local epoch the client adds the proximal term mu/2 * ||w - w_t||^2 to its loss with
`loss += mu / 2. * torch.pow(torch.norm(w.data - w_t.data), 2)`. The merged pull request deleted
the only line that applied the proximal gradient by hand (`w_t.grad.data += mu * (w_t.data -
w.data)`, "makes no sense"), leaving the loss term, which is read through `.data` on both sides: a
constant that changes the printed loss and no gradient. Each client trains as plain FedAvg and
nothing is raised.
Source: https://github.com/yjlee22/FedShare/pull/2
expect: silent"""
import copy

import torch
import torch.nn as nn

torch.manual_seed(0)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer_input = nn.Linear(20, 32)
        self.relu = nn.ReLU()
        self.layer_hidden = nn.Linear(32, 4)

    def forward(self, x):
        return torch.log_softmax(self.layer_hidden(self.relu(self.layer_input(x))), dim=1)


class LocalUpdate:
    def __init__(self, images, labels, mu=0.5, local_ep=3, lr=0.05):
        self.batches = list(zip(images.split(16), labels.split(16)))
        self.loss_func = nn.NLLLoss()
        self.mu = mu
        self.local_ep = local_ep
        self.lr = lr

    def train(self, net):
        local_net = copy.deepcopy(net)
        net.train()
        optimizer = torch.optim.SGD(net.parameters(), lr=self.lr, momentum=0.5)
        epoch_loss = []
        for iter in range(self.local_ep):
            for images, labels in self.batches:
                net.zero_grad()
                log_probs = net(images)
                loss = self.loss_func(log_probs, labels)
                if iter > 0:
                    for w, w_t in zip(local_net.parameters(), net.parameters()):
                        loss += self.mu / 2. * torch.pow(torch.norm(w.data - w_t.data), 2)
                loss.backward()
                optimizer.step()
                epoch_loss.append(loss.detach())
        return net.state_dict(), epoch_loss


def fed_avg(states):
    averaged = copy.deepcopy(states[0])
    for key in averaged:
        averaged[key] = torch.stack([state[key] for state in states]).mean(0)
    return averaged


clients = []
for shift in (-1.0, 1.0, 2.0):
    images = torch.randn(48, 20) + shift
    labels = (images[:, :4].sum(1) > 4 * shift).long() + 2 * (images[:, 4] > shift).long()
    clients.append(LocalUpdate(images, labels))

net_glob = MLP()
losses = []
for round_ in range(2):
    states = []
    for client in clients:
        state, client_losses = client.train(copy.deepcopy(net_glob))
        states.append(state)
        losses.extend(client_losses)
    net_glob.load_state_dict(fed_avg(states))
result = {"losses": losses, "params": [p.detach().clone() for p in net_glob.parameters()]}
