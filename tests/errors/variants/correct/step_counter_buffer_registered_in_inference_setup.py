# message: Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to
#   get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for
#   more details.
# code: AD110 (catalogue: inference_inplace_outside)
# set: 13
# trigger: a Trainer-like class runs the model's setup() hook and a sanity forward under
#   torch.inference_mode(); setup() registers a buffer that counts the examples seen, which forward
#   increments in place, and training then fails at the first increment
# source: none found; the pattern as users write it (setup hooks run inside the sanity check)
# results: model, losses, seen
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def setup(self):
        self.register_buffer("examples_seen", torch.zeros(()))

    def forward(self, x):
        self.examples_seen += x.shape[0]
        return self.linear(x)


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def fit(self, batches):
        with torch.no_grad():  # PRIMARY
            self.model.setup()
            self.model(batches[0][0])
        losses = []
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = (self.model(x) - y).pow(2).mean()
            loss.backward()
            self.optimizer.step()
            losses.append(loss.item())
        return losses


torch.manual_seed(0)
model = Regressor()
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
losses = Trainer(model, lr=0.1).fit(batches)
seen = model.examples_seen.item()
