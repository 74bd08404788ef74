# message: One of the differentiated Tensors appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.
# code: AD305 (catalogue: grad_unused_input)
# trigger: a meta-learning-style inner step takes torch.autograd.grad of the loss with respect
#   to all of model.parameters(), and the model has a layer its forward does not use
# source: none found; the pattern as users write it
# results: loss, model
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.aux = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)


torch.manual_seed(0)
model = Net()
loss = model(torch.randn(4, 3)).pow(2).mean()
grads = torch.autograd.grad(loss, list(model.parameters()))  # PRIMARY
with torch.no_grad():
    for p, g in zip(model.parameters(), grads):
        p -= 0.1 * g
