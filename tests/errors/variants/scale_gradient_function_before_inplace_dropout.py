# message: Output 0 of ScaleGradient is a view and is being modified inplace. This view was created
#   inside a custom Function (or because an input was returned as-is) and the autograd logic to
#   handle view+inplace would override the custom backward associated with the custom Function,
#   leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the
#   output of the custom Function.
# code: AD107 (catalogue: custom_function_view_inplace)
# set: 6
# trigger: a Function that scales the gradient of a shared trunk returns x.view_as(x); the
#   auxiliary head behind it is an nn.Sequential that starts with nn.Dropout(inplace=True)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ScaleGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.scale, None


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.main_head = nn.Linear(8, 1)
        self.aux_head = nn.Sequential(nn.Dropout(0.25, inplace=True), nn.Linear(8, 1))

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        aux_input = ScaleGradient.apply(h, 0.1)  # PRIMARY
        return self.main_head(h), self.aux_head(aux_input)


torch.manual_seed(0)
model = MultiTask()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y, z = torch.randn(6, 4), torch.randn(6, 1), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    main, aux = model(x)
    loss = F.mse_loss(main, y) + F.mse_loss(aux, z)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
