# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more details.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 9
# trigger: a loader helper builds the network under torch.inference_mode() (it was written for
#   serving); the same network is then fine-tuned, and BatchNorm's running statistics (buffers made
#   under inference_mode) are updated in place by the training forward
# source: none found; the pattern as users write it (one loader for serving and fine-tuning)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


def load_model():
    with torch.no_grad():  # PRIMARY
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    return model


model = load_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
