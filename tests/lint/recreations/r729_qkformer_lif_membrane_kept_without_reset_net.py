"""QKFormer (a spiking transformer), issue 10: training the model with an ordinary loop
(forward, loss, `optimizer.zero_grad()`, `loss_total.backward()`, `optimizer.step()`) raises
"Trying to backward through the graph a second time" at the second batch.  The neurons keep
their membrane potential on the module between calls (spikingjelly's multi-step LIF node), and the
repository's own training resets it with `functional.reset_net(model)` after every step; the
user's loop never calls it, so the second batch's potential still carries the first batch's
freed graph.
Re-created in my own words with the model's structure: a multi-step LIF node keeping `self.v`,
a `reset_net` helper that the loop does not call, a spiking patch embedding, a Q-K token attention
block, a classification head averaged over time steps, and the user's loop.
Raises at the second `loss_total.backward()`; buggy line: `self.v = ...` kept from call to call.
Source: https://github.com/zhouchenlin2096/QKFormer/issues/10"""
import torch
import torch.nn as nn


def heaviside_surrogate(x, alpha=4.0):
    # forward: step function; backward: gradient of a sigmoid (straight-through)
    soft = torch.sigmoid(alpha * x)
    return (x > 0).float() + soft - soft.detach()


class MultiStepLIFNode(nn.Module):
    def __init__(self, tau=2.0, v_threshold=1.0):
        super().__init__()
        self.tau = tau
        self.v_threshold = v_threshold
        self.v = 0.0

    def reset(self):
        self.v = 0.0

    def forward(self, x_seq):
        spikes = []
        for t in range(x_seq.shape[0]):
            self.v = self.v + (x_seq[t] - self.v) / self.tau  # missed: ADL017, a neuron's state rebound from itself on `self` (`self.v = self.v + ...`) inside a loop over time steps and kept from call to call; the module's `reset` is never called by the loop
            spike = heaviside_surrogate(self.v - self.v_threshold)
            self.v = self.v * (1.0 - spike)
            spikes.append(spike)
        return torch.stack(spikes)


def reset_net(net):
    for m in net.modules():
        if hasattr(m, 'reset'):
            m.reset()


class TokenQKAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q_linear = nn.Linear(dim, dim)
        self.k_linear = nn.Linear(dim, dim)
        self.q_lif = MultiStepLIFNode()
        self.k_lif = MultiStepLIFNode()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q = self.q_lif(self.q_linear(x))
        k = self.k_lif(self.k_linear(x))
        token_attn = q.sum(dim=-1, keepdim=True)
        return self.proj(token_attn * k)


class QKFormer(nn.Module):
    def __init__(self, in_dim=12, dim=16, num_classes=1, T=2):
        super().__init__()
        self.T = T
        self.embed = nn.Linear(in_dim, dim)
        self.embed_lif = MultiStepLIFNode()
        self.attn = TokenQKAttention(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = x.unsqueeze(0).repeat(self.T, 1, 1, 1)
        x = self.embed_lif(self.embed(x))
        x = x + self.attn(x)
        return self.head(x.mean(dim=2)).mean(0)


def cal_loss(pre_label, label):
    total = nn.functional.mse_loss(pre_label, label)
    return {'total': total}


def run():
    torch.manual_seed(0)
    model = QKFormer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_loader = [(torch.randn(2, 5, 12), torch.rand(2)) for _ in range(3)]
    for epoch in range(1, 2):
        model.train()
        for iteration, data in enumerate(train_loader):
            img, label = data[0], data[1].float()
            pre_label = model(img).squeeze(1).float()
            loss_dict = cal_loss(pre_label, label)
            loss_total = loss_dict['total']
            optimizer.zero_grad()
            loss_total.backward()
            optimizer.step()
