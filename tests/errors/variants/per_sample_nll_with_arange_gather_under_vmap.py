# message: too many indices for tensor of dimension 1
# code: AD145 (catalogue: vmap_batch_dimension_indexed)
# set: 17
# trigger: per-sample gradient norms with torch.func.vmap(torch.func.grad(...)) over functional_call; the
#   loss is a hand-written negative log-likelihood that picks each row's target with
#   log_probs[torch.arange(log_probs.shape[0]), targets], written for a batch, but under vmap it sees
#   one sample's 1-d log-probabilities
# source: none found; the pattern as users write it (the arange gather of a hand-written NLL)
# results: norms
import torch
from torch import nn
from torch.func import functional_call, grad, vmap


def nll(log_probs, targets):
    return -log_probs[torch.arange(log_probs.shape[0]), targets].mean()


class PerSampleNorms:
    def __init__(self, model):
        self.model = model
        self.params = {name: p.detach() for name, p in model.named_parameters()}

    def sample_loss(self, params, x, y):
        log_probs = functional_call(self.model, params, (x,)).log_softmax(-1)
        return nll(log_probs, y)  # PRIMARY

    def __call__(self, xs, ys):
        grads = vmap(grad(self.sample_loss), in_dims=(None, 0, 0))(self.params, xs, ys)
        return torch.stack([g.flatten(1).norm(dim=1) for g in grads.values()]).norm(dim=0)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3))
xs, ys = torch.randn(5, 4), torch.randint(0, 3, (5,))
norms = PerSampleNorms(model)(xs, ys)
