# message: The differentiated Tensor at index 6 appears to not have been used in the graph. Set
#   allow_unused=True if this is the desired behavior.
# code: AD305 (catalogue: grad_unused_input)
# set: 26
# trigger: a residual network trained with LayerDrop skips each block with probability 0.5 in training
#   mode; a Reptile-style inner step takes torch.autograd.grad(loss, list(model.parameters())) and
#   updates the parameters by hand, and in the first step a block was skipped, so its parameters are
#   not in the graph
# source: none found; the pattern as users write it (LayerDrop / stochastic depth with a hand-written
#   gradient step over all parameters)
# results: model, losses
import torch
from torch import nn
import torch.nn.functional as F


class LayerDropNet(nn.Module):
    def __init__(self, width=6, depth=4, drop=0.5):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.head = nn.Linear(width, 1)
        self.drop = drop

    def forward(self, x):
        for block in self.blocks:
            if self.training and torch.rand(()) < self.drop:
                continue
            x = x + torch.tanh(block(x))
        return self.head(x)


class InnerLoop:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.lr = lr

    def step(self, inputs, targets):
        loss = F.mse_loss(self.model(inputs), targets)
        parameters = list(self.model.parameters())
        grads = torch.autograd.grad(loss, parameters, materialize_grads=True)  # PRIMARY
        with torch.no_grad():
            for parameter, grad in zip(parameters, grads):
                parameter.sub_(self.lr * grad)
        return loss.detach()


torch.manual_seed(0)
model = LayerDropNet()
inner = InnerLoop(model)
losses = [inner.step(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(4)]
