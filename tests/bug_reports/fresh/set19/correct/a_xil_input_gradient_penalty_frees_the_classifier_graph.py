"""Explanatory interactive learning with a "right for the right reasons" loss (ml-research/NeSyXIL,
train_clevr_hans_concept_learner_xil_globalrule.py, `run_rrr`): the penalty is built from the input
gradients of the log-probabilities, computed with an attribution helper in the style of captum's
`compute_gradients`, `torch.autograd.grad(torch.unbind(outputs), inputs)`. Without
`create_graph=True` that call frees the classifier's graph and returns constants, so the
following `loss.backward()` of cross entropy + penalty fails with "Trying to backward through the
graph a second time".
Source: https://github.com/ml-research/NeSyXIL/issues/3 ("autograd backward error"; the maintainers
point to the one line they changed in captum so that the gradient computation keeps the graph).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def compute_gradients(outputs, inputs):
    # attribution helper: d outputs / d inputs, one value per output row
    return torch.autograd.grad(torch.unbind(outputs), inputs, create_graph=True)[0]


model = nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                      nn.Linear(24, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

images = torch.rand(4, 3, 8, 8)
labels = torch.tensor([0, 1, 2, 1])
wrong_reason_mask = torch.zeros(4, 1, 8, 8)
wrong_reason_mask[..., :, :3] = 1.0  # the user marked the left columns as a confounder
LAMBDA = 10.0

losses = []
for step in range(3):
    optimizer.zero_grad()
    inputs = images.clone().requires_grad_(True)
    log_probs = F.log_softmax(model(inputs), dim=1)
    ce = F.nll_loss(log_probs, labels)
    input_grads = compute_gradients(log_probs.sum(dim=1), inputs)
    penalty = (wrong_reason_mask * input_grads).pow(2).sum()
    loss = ce + LAMBDA * penalty
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
