# message: The differentiated Tensor at index 4 appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.
# code: AD305 (catalogue: grad_unused_input)
# set: 4
# trigger: MAML's inner step asks torch.autograd.grad for all the model's parameters, but the
#   auxiliary head is not used by the regression task's loss
# source: https://github.com/learnables/learn2learn/issues/314 (inner-loop grad over unused parameters)
# results: meta_loss, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import functional_call


class MultiHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 6)
        self.regression = nn.Linear(6, 1)
        self.auxiliary = nn.Linear(6, 2)

    def forward(self, x):
        return self.regression(torch.tanh(self.body(x)))


def inner_step(model, x, y, lr=0.1):
    params = dict(model.named_parameters())
    loss = F.mse_loss(functional_call(model, params, (x,)), y)
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)  # PRIMARY
    return {name: p - lr * g for (name, p), g in zip(params.items(), grads)}


torch.manual_seed(0)
model = MultiHeadNet()
meta_optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
support, support_y = torch.randn(5, 3), torch.randn(5, 1)
query, query_y = torch.randn(5, 3), torch.randn(5, 1)
meta_optimizer.zero_grad()
fast = inner_step(model, support, support_y)
meta_loss = F.mse_loss(functional_call(model, fast, (query,)), query_y)
meta_loss.backward()
meta_optimizer.step()
