"""Meta-learning representations for continual learning (OML / MRCL): the inner loop adapts the
prediction network's weights along a trajectory with `grad = torch.autograd.grad(loss,
fast_weights)` and `fast_weights = w - lr * grad`; the meta-loss on the query set is then
backpropagated to the representation network. Without `create_graph=True` the inner gradients are
constants of the graph: the meta-gradient silently drops every term that goes through them
(first-order only), so the representation is trained on the wrong gradient.
Source: https://github.com/kjaved0/mrcl/issues/15 ("First step is to set create_graph=True in the
torch.autograd.grad function. Without this flag, the second order gradients are never computed";
the fix also takes the inner gradient of the adapted weights only).
expect: silent"""
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
        grad = torch.autograd.grad(loss, fast_weights)
        fast_weights = [w - UPDATE_LR * g if w.learn else w for g, w in zip(grad, fast_weights)]
        for new, old in zip(fast_weights, params):
            new.learn = old.learn
    x_query = torch.rand(10, 1) * 6 - 3
    meta_loss = F.mse_loss(net(x_query, fast_weights), amplitude * torch.sin(x_query + phase))
    meta_optimizer.zero_grad()
    meta_loss.backward()
    meta_optimizer.step()
    meta_losses.append(meta_loss.detach())
result = {"meta_losses": meta_losses, "params": [p.detach().clone() for p in params]}
