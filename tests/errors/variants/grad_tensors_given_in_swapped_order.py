# message: Mismatch in shape: grad_output[0] has a shape of torch.Size([4, 1]) and output[0] has a shape of torch.Size([4, 2]).
# code: AD123 (catalogue: grad_outputs_shape)
# set: 9
# trigger: a two-headed model is trained with torch.autograd.backward over both outputs at once;
#   the upstream gradients in grad_tensors are listed in the other order than the outputs
# source: none found; the pattern as users write it (backward of several outputs with their
#   upstream gradients, as in pipeline-parallel stages)
# results: model
import torch
from torch import nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(3, 4)
        self.mean = nn.Linear(4, 2)
        self.value = nn.Linear(4, 1)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return self.mean(h), self.value(h)


torch.manual_seed(0)
model = TwoHeads()
x = torch.randn(4, 3)
mean, value = model(x)
grad_mean, grad_value = torch.randn(4, 2), torch.randn(4, 1)
torch.autograd.backward([mean, value], grad_tensors=[grad_value, grad_mean])  # PRIMARY
