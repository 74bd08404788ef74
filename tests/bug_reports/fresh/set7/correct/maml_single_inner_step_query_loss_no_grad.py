"""MAML few-shot classification: with one inner step the meta-loss was the query loss recorded
under `torch.no_grad()`.
Source: https://github.com/dragen1860/MAML-Pytorch/issues/40 (the query loss after the first
inner update is computed with gradients)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
N_WAY, DIM, TASKS = 3, 8, 2
update_step, update_lr = 1, 0.4
weights = [torch.randn(16, DIM).mul_(0.3).requires_grad_(), torch.zeros(16, requires_grad=True),
           torch.randn(N_WAY, 16).mul_(0.3).requires_grad_(), torch.zeros(N_WAY, requires_grad=True)]
meta_optim = torch.optim.Adam(weights, lr=1e-2)


def net(x, params):
    hidden = F.relu(F.linear(x, params[0], params[1]))
    return F.linear(hidden, params[2], params[3])


meta_losses = []
for epoch in range(2):
    x_spt, y_spt = torch.randn(TASKS, 6, DIM), torch.randint(0, N_WAY, (TASKS, 6))
    x_qry, y_qry = torch.randn(TASKS, 9, DIM), torch.randint(0, N_WAY, (TASKS, 9))
    losses_q = [0 for _ in range(update_step + 1)]
    for i in range(TASKS):
        loss = F.cross_entropy(net(x_spt[i], weights), y_spt[i])
        grad = torch.autograd.grad(loss, weights)
        fast_weights = [w - update_lr * g for g, w in zip(grad, weights)]
        with torch.no_grad():
            losses_q[0] += F.cross_entropy(net(x_qry[i], weights), y_qry[i])
        losses_q[1] += F.cross_entropy(net(x_qry[i], fast_weights), y_qry[i])
        for k in range(1, update_step):
            loss = F.cross_entropy(net(x_spt[i], fast_weights), y_spt[i])
            grad = torch.autograd.grad(loss, fast_weights)
            fast_weights = [w - update_lr * g for g, w in zip(grad, fast_weights)]
            losses_q[k + 1] += F.cross_entropy(net(x_qry[i], fast_weights), y_qry[i])
    loss_q = losses_q[-1] / TASKS
    meta_optim.zero_grad()
    loss_q.backward()
    meta_optim.step()
    meta_losses.append(loss_q.detach())
result = {"meta_losses": meta_losses, "weights": [w.detach().clone() for w in weights]}
