# message: A view was created in no_grad mode and is being modified inplace with grad mode enabled.
# code: AD105 (catalogue: view_nograd_inplace)
# set: 3
# trigger: a classification head takes the first-token row of the hidden states inside the
#   torch.no_grad() block that logs their norm, then divides that row in place by a temperature;
#   the head runs inside a module's forward called by a Trainer-like class
# source: https://github.com/pytorch/pytorch/pull/103185 (the message; both ways out)
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ClsHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 4)
        self.classifier = nn.Linear(4, 2)
        self.temperature = 0.5
        self.norms = []

    def forward(self, tokens):
        hidden = self.encoder(tokens)
        with torch.no_grad():
            self.norms.append(hidden.norm().item())
        cls = hidden[:, 0]  # PRIMARY
        cls.div_(self.temperature)
        return self.classifier(torch.relu(cls))


class Trainer:
    def __init__(self, model, lr):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.losses = []

    def fit(self, batches):
        for tokens, labels in batches:
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(tokens), labels)
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())


torch.manual_seed(0)
model = ClsHead()
batches = [(torch.randn(3, 5, 4), torch.tensor([0, 1, 1])) for _ in range(2)]
trainer = Trainer(model, lr=0.1)
trainer.fit(batches)
