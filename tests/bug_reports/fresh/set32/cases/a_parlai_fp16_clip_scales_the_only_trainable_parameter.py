"""ParlAI's fp16 optimizer wrapper clips gradients with its own `clip_grad_norm`; for the special
case `len(params) == 1` it computes the clip coefficient and then does `p.mul_(clip_coef)` on the
parameter itself instead of its gradient. The reporter trained a task-token model with everything
frozen but one embedding, and the first clipped step failed with "a leaf Variable that requires
grad has been used in an in-place operation." The PR scales the gradient, as PyTorch's and
fairseq's clipping do: `p.grad.detach().mul_(clip_coef)`.
Source: https://github.com/facebookresearch/ParlAI/pull/3014
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def clip_grad_norm(params, max_norm):
    params = [p for p in params if p.grad is not None]
    if len(params) == 1:
        p = params[0]
        grad_norm = torch.norm(p.grad)
        clip_coef = max_norm / (grad_norm + 1e-6)
        if clip_coef < 1:
            p.mul_(clip_coef)
        return grad_norm
    return torch.nn.utils.clip_grad_norm_(params, max_norm)


class TaskTokenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)
        self.task_tokens = nn.Embedding(4, 8)
        self.head = nn.Linear(8, 3)
        for module in (self.encoder, self.head):
            for p in module.parameters():
                p.requires_grad = False

    def forward(self, x, task):
        return self.head(torch.relu(self.encoder(x) + self.task_tokens(task)))


model = TaskTokenModel()
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(params, lr=0.1)
losses, norms = [], []
for step in range(3):
    x, task, y = torch.randn(6, 8) * 50, torch.randint(0, 4, (6,)), torch.randint(0, 3, (6,))
    loss = nn.functional.cross_entropy(model(x, task), y)
    optimizer.zero_grad()
    loss.backward()
    norms.append(clip_grad_norm(params, max_norm=0.1).detach())
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "norms": torch.stack(norms), "task_tokens": model.task_tokens.weight.detach().clone()}
