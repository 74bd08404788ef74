# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# set: 4
# trigger: a forward hook registered for monitoring stores each layer's output as a NumPy array
#   while the model trains
# source: none found; the pattern as users write it
# results: losses, model, torch.from_numpy(activations["hidden"])
import torch
from torch import nn
import torch.nn.functional as F

activations = {}


def keep_activation(name):
    def hook(module, inputs, output):
        activations[name] = output.numpy()  # PRIMARY
    return hook


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1))
model[1].register_forward_hook(keep_activation("hidden"))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
