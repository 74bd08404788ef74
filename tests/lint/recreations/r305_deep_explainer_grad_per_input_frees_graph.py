"""SHAP's PyTorch `DeepExplainer` computes, for a model with several inputs,
the gradient of the selected output with respect to each input in turn:
`grads = [torch.autograd.grad(selected, x)[0] for x in X]`.  The first
`autograd.grad` frees the graph, so the second input's call fails ("Trying
to backward through the graph a second time").  The fix passes
`retain_graph=True` to every call but the last (or asks for all inputs in
one call).
Buggy line: the `torch.autograd.grad(selected, x)` in `PyTorchDeep.gradient`.
Expected finding: ADL019 there.
Source: https://github.com/shap/shap/pull/684"""
import torch
import torch.nn as nn


class TwoInputModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.image_branch = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.meta_branch = nn.Sequential(nn.Linear(3, 8), nn.ReLU())
        self.head = nn.Linear(16, 2)

    def forward(self, image, meta):
        return self.head(torch.cat([self.image_branch(image), self.meta_branch(meta)], dim=1))


class PyTorchDeep:
    def __init__(self, model):
        self.model = model.eval()

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = [x.requires_grad_() for x in inputs]
        outputs = self.model(*X)
        selected = [val for val in outputs[:, idx]]
        grads = [torch.autograd.grad(selected, x)[0].detach() for x in X]  # expect: ADL019
        return grads

    def shap_values(self, inputs, background):
        phis = []
        for idx in range(2):
            grads = self.gradient(idx, inputs)
            phis.append([g * (x - b.mean(0)) for g, x, b in zip(grads, inputs, background)])
        return phis


def run():
    torch.manual_seed(0)
    explainer = PyTorchDeep(TwoInputModel())
    background = [torch.randn(5, 6), torch.randn(5, 3)]
    explainer.shap_values([torch.randn(2, 6), torch.randn(2, 3)], background)
