"""A Q&A page on PyTorch's "ValueError: can't optimize a non-leaf Tensor":
its third scenario builds a list of parameters with `requires_grad=True`,
processes them (`processed_params = [p * 2 for p in params]`) and hands the
processed list to `torch.optim.Adam`, which refuses them; the fix is to
optimize the original leaf tensors.  Re-created as a small matrix
factorisation model whose factors are created as leaves and scaled by a
fixed initial gain before being handed to the optimizer.  Raises at the
optimizer's construction.
Buggy line: `return [p * self.gain for p in self.factors]` (non-leaf tensors
given to the optimizer as parameters).
Source: https://duoke360.com/post/34448"""
import torch


class FactorModel:
    def __init__(self, n_users=5, n_items=6, rank=3, gain=2.0):
        self.factors = [torch.randn(n_users, rank, requires_grad=True),
                        torch.randn(n_items, rank, requires_grad=True)]
        self.gain = gain

    def trainable(self):
        return [p * self.gain for p in self.factors]  # expect: ADL020

    def predict(self, params):
        users, items = params
        return users @ items.T


def run():
    torch.manual_seed(0)
    model = FactorModel()
    params = model.trainable()
    optimizer = torch.optim.Adam(params, lr=0.01)
    ratings = torch.randn(5, 6)
    for _ in range(2):
        optimizer.zero_grad()
        loss = ((model.predict(params) - ratings) ** 2).mean()
        loss.backward()
        optimizer.step()
