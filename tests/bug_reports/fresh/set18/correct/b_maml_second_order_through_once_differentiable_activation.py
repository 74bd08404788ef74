"""Second-order MAML through a custom Swish whose backward, written with differentiable
operations, may itself be differentiated.
Source: https://github.com/facebookresearch/higher/issues/137."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)

INNER_LR, HIDDEN = 0.05, 24


class MemoryEfficientSwish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        sig = torch.sigmoid(x)
        return grad_output * (sig * (1 + x * (1 - sig)))


def regressor(params, x):
    hidden = MemoryEfficientSwish.apply(x @ params[0] + params[1])
    return hidden @ params[2] + params[3]


params = [(torch.randn(1, HIDDEN) * 0.5).requires_grad_(), torch.zeros(HIDDEN, requires_grad=True),
          (torch.randn(HIDDEN, 1) * 0.2).requires_grad_(), torch.zeros(1, requires_grad=True)]
meta_optimizer = torch.optim.Adam(params, lr=1e-2)


def sine_task():
    amplitude, phase = torch.rand(1) * 4 + 0.1, torch.rand(1) * 3
    support_x, query_x = torch.rand(10, 1) * 10 - 5, torch.rand(10, 1) * 10 - 5
    return support_x, amplitude * torch.sin(support_x + phase), query_x, amplitude * torch.sin(query_x + phase)


meta_losses = []
for meta_step in range(8):
    meta_loss = 0.0
    for task in range(3):
        support_x, support_y, query_x, query_y = sine_task()
        support_loss = F.mse_loss(regressor(params, support_x), support_y)
        grads = torch.autograd.grad(support_loss, params, create_graph=True)
        adapted = [p - INNER_LR * g for p, g in zip(params, grads)]
        meta_loss = meta_loss + F.mse_loss(regressor(adapted, query_x), query_y)
    meta_optimizer.zero_grad()
    meta_loss.backward()
    meta_optimizer.step()
    meta_losses.append(meta_loss.detach())

result = {"meta_losses": torch.stack(meta_losses), "params": [p.detach().clone() for p in params]}
