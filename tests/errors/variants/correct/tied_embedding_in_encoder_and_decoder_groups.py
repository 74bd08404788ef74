# message: some parameters appear in more than one parameter group
# code: AD132 (catalogue: optimizer_overlapping_groups)
# set: 7
# trigger: a language model ties its output projection to the input embedding
#   (decoder.weight = embedding.weight); the optimizer gets one group per submodule, and the tied
#   weight is in both
# source: none found; the pattern as users write it (weight tying, Press & Wolf 2017)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(6, 4)
        self.decoder = nn.Linear(4, 6, bias=False)
        self.decoder.weight = self.embedding.weight

    def forward(self, tokens):
        return self.decoder(self.embedding(tokens))


torch.manual_seed(0)
model = TinyLM()
optimizer = torch.optim.SGD([
    {"params": model.embedding.parameters()},
], lr=0.1)
tokens, targets = torch.tensor([0, 2, 4]), torch.tensor([1, 3, 5])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), targets)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
