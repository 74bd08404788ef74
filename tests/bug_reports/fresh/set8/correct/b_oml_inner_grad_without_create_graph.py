"""OML inner loop: the inner gradients taken without `create_graph=True` (first-order meta-gradient).
Source: https://github.com/kjaved0/mrcl/issues/15 (`create_graph=True`, on the adapted weights)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
HIDDEN, UPDATE_LR = 16, 0.1


class Weight(torch.nn.Parameter):
    """A parameter with a flag that says whether the inner loop adapts it."""


def make_weight(tensor, learn):
    weight = Weight(tensor)
    weight.learn = learn
    return weight


params = [make_weight(torch.randn(HIDDEN, 1) * 0.5, False), make_weight(torch.zeros(HIDDEN), False),
          make_weight(torch.randn(1, HIDDEN) * 0.3, True), make_weight(torch.zeros(1), True)]
meta_optimizer = torch.optim.Adam(params, lr=1e-2)


def net(x, weights):
    rep = torch.tanh(F.linear(x, weights[0], weights[1]))
    return F.linear(rep, weights[2], weights[3])


meta_losses = []
for meta_step in range(3):
    amplitude, phase = torch.rand(1) * 2 + 0.5, torch.rand(1) * 3
    x_traj = torch.rand(4, 5, 1) * 6 - 3
    y_traj = amplitude * torch.sin(x_traj + phase)
    fast_weights = list(params)
    for k in range(x_traj.shape[0]):
        loss = F.mse_loss(net(x_traj[k], fast_weights), y_traj[k])
        adapted = [w for w in fast_weights if w.learn]
        grad = iter(torch.autograd.grad(loss, adapted, create_graph=True))
        fast_weights = [w - UPDATE_LR * next(grad) if w.learn else w for w in fast_weights]
        for new, old in zip(fast_weights, params):
            new.learn = old.learn
    x_query = torch.rand(10, 1) * 6 - 3
    meta_loss = F.mse_loss(net(x_query, fast_weights), amplitude * torch.sin(x_query + phase))
    meta_optimizer.zero_grad()
    meta_loss.backward()
    meta_optimizer.step()
    meta_losses.append(meta_loss.detach())
result = {"meta_losses": meta_losses, "params": [p.detach().clone() for p in params]}
