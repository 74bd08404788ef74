# message: A view was created in no_grad mode and its base or another view of its base has been
#   modified inplace with grad mode enabled.
# code: AD106 (catalogue: view_nograd_base_modified)
# set: 7
# trigger: a Trainer-like step takes the first column of the encoder's features under no_grad as
#   a fixed context, then the model divides the features by their norm with /= before the loss
# source: none found; the pattern as users write it
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)

    def forward(self, x):
        return self.lin(x)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.losses = []

    def step(self, x, y):
        features = self.model(x)
        with torch.no_grad():
            context = features[:, 0]
        features /= features.norm(dim=1, keepdim=True)  # PRIMARY
        prediction = features.sum(dim=1) * context
        loss = F.mse_loss(prediction, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.losses.append(loss.item())


torch.manual_seed(0)
model = Encoder()
trainer = Trainer(model)
x, y = torch.randn(5, 3), torch.randn(5)
for _ in range(2):
    trainer.step(x, y)
