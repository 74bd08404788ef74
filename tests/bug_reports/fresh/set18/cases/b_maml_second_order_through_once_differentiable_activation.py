"""Second-order MAML on a regression network whose activation is a custom `autograd.Function`
(a memory-saving Swish that saves only its input and recomputes the sigmoid in backward). Its
backward is decorated with `@once_differentiable`. The inner step takes the support gradient with
`create_graph=True` so that the meta-gradient can flow through it; differentiating the query loss
then has to differentiate the activation's backward, and PyTorch raises "trying to differentiate
twice a function that was marked with @once_differentiable".
Source: https://github.com/facebookresearch/higher/issues/137 ("once_differentiable": the inner
loop's `diffopt.step(loss)` of a model with such a function fails with that error, and runs only
with `track_higher_grads=False`, which drops the second-order terms; the change that keeps them is
to let the function's backward be differentiated, as tiny-cuda-nn did in NVlabs/tiny-cuda-nn#69 by
removing `@once_differentiable` from a backward written with differentiable operations).
expect: raises"""
import torch
import torch.nn.functional as F
from torch.autograd.function import once_differentiable

torch.manual_seed(0)

INNER_LR, HIDDEN = 0.05, 24


class MemoryEfficientSwish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * torch.sigmoid(x)

    @staticmethod
    @once_differentiable
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
