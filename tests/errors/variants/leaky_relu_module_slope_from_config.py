# message: In-place leakyReLu backward calculation is triggered with a negative slope which is not
#   supported. This is caused by calling in-place forward function with a negative slope, please
#   call out-of-place version instead. File an issue at https://github.com/pytorch/pytorch if you do
#   require supporting in-place leakRelu backward calculation with negative slope
# code: AD130 (catalogue: leaky_relu_inplace_negative)
# set: 6
# trigger: an nn.Sequential built from a config dict: nn.LeakyReLU(config["slope"],
#   inplace=config["inplace"]) with a negative slope (a learned-sign experiment)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F

config = {"hidden": 8, "slope": -0.3, "inplace": True}


def build_model(config):
    return nn.Sequential(
        nn.Linear(4, config["hidden"]),
        nn.LeakyReLU(config["slope"], inplace=config["inplace"]),  # PRIMARY
        nn.Linear(config["hidden"], 1),
    )


torch.manual_seed(0)
model = build_model(config)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
