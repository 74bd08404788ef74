# message: vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor
#   `other` in extra_args that has more elements than `self`. This happened due to `other` being
#   vmapped over but `self` not being vmapped over in a vmap. Please try to use out-of-place
#   operators instead of inplace arithmetic. If said operator is being called inside the PyTorch
#   framework, please file a bug report instead.
# code: AD144 (catalogue: vmap_write_into_unbatched)
# set: 10
# trigger: a per-sample likelihood made of several per-output factors starts from
#   likelihood = torch.ones(2) and multiplies each factor in with *=; the per-sample losses are
#   computed with torch.func.vmap over the batch, where the factors are batched and the ones are not
# source: none found; the pattern as users write it (likelihoods multiplied factor by factor)
# results: losses, model
import torch
from torch import nn
from torch.func import functional_call, vmap


def per_sample_loss(model, parameters, x, y):
    prediction = functional_call(model, parameters, (x.unsqueeze(0),)).squeeze(0)
    likelihood = torch.ones(2)
    likelihood = likelihood * torch.exp(-(prediction - y).pow(2))  # PRIMARY
    likelihood = likelihood * torch.sigmoid(prediction)
    return -likelihood.log().sum()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    parameters = dict(model.named_parameters())
    per_sample = vmap(per_sample_loss, in_dims=(None, None, 0, 0))(model, parameters, x, y)
    loss = per_sample.mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
