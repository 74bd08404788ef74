"""MeLU (meta-learned user preference estimator) on the reporter's own data: the local update
takes `grad = torch.autograd.grad(loss, self.model.parameters(), create_graph=True)` over every
parameter, and one item-feature embedding (here the director feature, absent from the data) is
never looked up, so meta-training fails with "One of the differentiated Tensors appears to not
have been used in the graph. Set allow_unused=True if this is the desired behavior." The fix the
error names: `allow_unused=True`, with the missing gradients taken as zero in the fast-weight
update.
Source: https://github.com/waterhorse1/MELU_pytorch/issues/4
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ItemEmbedding(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.rate = nn.Embedding(6, dim)
        self.genre = nn.Linear(10, dim, bias=False)
        self.director = nn.Linear(8, dim, bias=False)

    def forward(self, rate, genre, director=None):
        parts = [self.rate(rate), self.genre(genre)]
        if director is not None:
            parts.append(self.director(director))
        return torch.cat(parts, dim=1)


class MeLUModel(nn.Module):
    def __init__(self, dim=4):
        super().__init__()
        self.item_emb = ItemEmbedding(dim)
        self.user_emb = nn.Embedding(5, dim)
        self.fc1 = nn.Linear(3 * dim, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, user, rate, genre, director=None, params=None):
        item = self.item_emb(rate, genre, director)[:, :8]
        x = torch.cat([item, self.user_emb(user)], dim=1)
        if params is None:
            return self.out(F.relu(self.fc1(x))).squeeze(-1)
        w1, b1, w2, b2 = params
        return F.linear(F.relu(F.linear(x, w1, b1)), w2, b2).squeeze(-1)


class MeLU:
    def __init__(self, local_lr=0.05):
        self.model = MeLUModel()
        self.local_lr = local_lr
        self.meta_optim = torch.optim.Adam(self.model.parameters(), lr=5e-3)

    def local_update(self, support, y):
        loss = F.mse_loss(self.model(*support), y)
        params = list(self.model.parameters())
        grad = torch.autograd.grad(loss, params, create_graph=True, allow_unused=True)
        fast = [p - self.local_lr * (g if g is not None else torch.zeros_like(p)) for p, g in zip(params, grad)]
        return fast[-4:]

    def global_update(self, tasks):
        losses = []
        for support, y_s, query, y_q in tasks:
            fast = self.local_update(support, y_s)
            losses.append(F.mse_loss(self.model(*query, params=fast), y_q))
        loss = torch.stack(losses).mean()
        self.meta_optim.zero_grad()
        loss.backward()
        self.meta_optim.step()
        return loss.detach()


def make_set(n):
    return (torch.randint(0, 5, (n,)), torch.randint(0, 6, (n,)), torch.rand(n, 10))


melu = MeLU()
losses = []
for epoch in range(3):
    tasks = [(make_set(6), torch.rand(6) * 5, make_set(4), torch.rand(4) * 5) for _ in range(2)]
    losses.append(melu.global_update(tasks))

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in melu.model.parameters()]}
