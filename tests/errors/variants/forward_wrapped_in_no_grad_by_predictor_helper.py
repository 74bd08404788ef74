# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 8
# helpers: lib_serving.py
# trigger: a serving helper in another file makes a predictor by wrapping the model's own forward
#   in torch.no_grad() (model.forward = torch.no_grad()(model.forward), the decorator applied as a
#   function); a sanity prediction is made before training, and training then calls the same model
# source: none found; the pattern as users write it
# results: first_prediction, losses, model
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_serving import make_predictor  # noqa: E402


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        return self.out(torch.tanh(self.body(x)))


torch.manual_seed(0)
model = Scorer()
x, y = torch.randn(5, 3), torch.randn(5, 1)
predict = make_predictor(model)
first_prediction = predict(x[:1])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
