# message: `inputs` argument to `grad()` cannot be empty.
# code: AD135 (catalogue: grad_empty_inputs)
# set: 4
# trigger: a meta-learner keeps self.params = model.parameters() (a generator), counts the
#   parameters from it for a log line, then asks torch.autograd.grad for them
# source: none found; the pattern as users write it
# results: adapted, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import functional_call


class MetaLearner:
    def __init__(self, model):
        self.model = model
        self.params = list(model.parameters())  # PRIMARY
        self.size = sum(p.numel() for p in self.params)

    def adapt(self, x, y, lr=0.1):
        names = [name for name, _ in self.model.named_parameters()]
        loss = F.mse_loss(self.model(x), y)
        grads = torch.autograd.grad(loss, self.params)
        return {name: p - lr * g for name, p, g in zip(names, self.model.parameters(), grads)}


torch.manual_seed(0)
model = nn.Linear(3, 1)
learner = MetaLearner(model)
x, y = torch.randn(4, 3), torch.randn(4, 1)
fast = learner.adapt(x, y)
query_loss = F.mse_loss(functional_call(model, fast, (x,)), y)
query_loss.backward()
adapted = [fast[name].detach() for name in sorted(fast)]
