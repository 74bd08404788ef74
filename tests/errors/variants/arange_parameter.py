# message: Only Tensors of floating point and complex dtype can require gradients
# code: AD114 (catalogue: requires_grad_integer_factory)
# set: 2
# trigger: learned positions initialised with torch.arange (an integer tensor) wrapped in
#   torch.nn.Parameter inside a module
# source: none found; the pattern as users write it
# results: loss, model
import torch


class Positions(torch.nn.Module):
    def __init__(self, steps):
        super().__init__()
        self.positions = torch.nn.Parameter(torch.arange(steps))  # PRIMARY

    def forward(self, x):
        return x + self.positions / 10


torch.manual_seed(0)
model = Positions(4)
loss = model(torch.randn(2, 4)).pow(2).mean()
loss.backward()
