"""Continual graph learning benchmark (graph classification, task-incremental), the joint-training
upper bound: when task t arrives, the baseline resets its network and trains on tasks 1..t at
once. The reset builds a new GCN (`self.net = GCN(...)`), but the optimizer was made once, from
the first network's parameters; from the second task on, every `opt.step()` updates a network
that is no longer used and the new one keeps its random weights. Training runs, the loss moves
only by the data, and the reported accuracy is that of a random guess (AP 0.5). Nothing raises.
Source: https://github.com/QueuQ/CGLB/issues/4 (fixed by https://github.com/QueuQ/CGLB/pull/5:
"instead of changing the model every task, which makes the optimizer's parameter wrong, just
reset the parameter of the model instead")
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FEATS, HIDDEN, N_TASKS, GRAPHS_PER_TASK, NODES = 5, 16, 3, 12, 7


class GCNLayer(nn.Module):
    def __init__(self, in_feats, out_feats):
        super().__init__()
        self.linear = nn.Linear(in_feats, out_feats)

    def forward(self, adj, h):
        degree = adj.sum(-1, keepdim=True).clamp(min=1.0)
        return self.linear(adj @ h / degree)


class GCN(nn.Module):
    def __init__(self, in_feats, hidden, n_cls):
        super().__init__()
        self.layer1 = GCNLayer(in_feats, hidden)
        self.layer2 = GCNLayer(hidden, hidden)
        self.classify = nn.Linear(hidden, n_cls)

    def forward(self, adj, feats):
        h = F.relu(self.layer1(adj, feats))
        h = F.relu(self.layer2(adj, h))
        return self.classify(h.mean(dim=1))


class JointTrainModel(nn.Module):
    def __init__(self, n_cls):
        super().__init__()
        self.n_cls = n_cls
        self.net = GCN(FEATS, HIDDEN, n_cls)

    def reset_model(self):
        self.net = GCN(FEATS, HIDDEN, self.n_cls)

    def observe(self, tasks_so_far, opt):
        self.net.train()
        losses = []
        for adj, feats, labels, task_id in tasks_so_far:
            logits = self.net(adj, feats)[:, 2 * task_id:2 * task_id + 2]
            losses.append(F.cross_entropy(logits, labels))
        loss = torch.stack(losses).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.detach()


def make_task(task_id):
    adj = (torch.rand(GRAPHS_PER_TASK, NODES, NODES) < 0.4).float()
    adj = ((adj + adj.transpose(1, 2) + torch.eye(NODES)) > 0).float()
    labels = torch.randint(0, 2, (GRAPHS_PER_TASK,))
    feats = torch.randn(GRAPHS_PER_TASK, NODES, FEATS) + labels.view(-1, 1, 1).float() * (task_id + 1) * 0.5
    return adj, feats, labels, task_id


tasks = [make_task(t) for t in range(N_TASKS)]
life_model = JointTrainModel(n_cls=2 * N_TASKS)
opt = torch.optim.Adam(life_model.parameters(), lr=0.01)

losses = []
accuracies = []
for task_id in range(N_TASKS):
    if task_id > 0:
        life_model.reset_model()
    for epoch in range(15):
        losses.append(life_model.observe(tasks[:task_id + 1], opt))
    life_model.net.eval()
    with torch.no_grad():
        for adj, feats, labels, tid in tasks[:task_id + 1]:
            pred = life_model.net(adj, feats)[:, 2 * tid:2 * tid + 2].argmax(-1)
            accuracies.append((pred == labels).float().mean())

result = {
    "losses": torch.stack(losses),
    "accuracies": torch.stack(accuracies),
    "params": [p.detach().clone() for p in life_model.net.parameters()],
}
