# message: vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a
#   Tensor `other` in extra_args that has more elements than `self`.
# code: AD144 (catalogue: vmap_write_into_unbatched)
# set: 5
# trigger: attention pooling: a function fills one sequence's token scores into a vector made with
#   torch.zeros, one token at a time; a module's forward maps it over the batch with
#   torch.func.vmap and a learned query
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import vmap


def token_scores(tokens, query):
    scores = torch.zeros(tokens.shape[0])  # PRIMARY
    for t in range(tokens.shape[0]):
        scores[t] = tokens[t] @ query
    return scores


class PooledClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Parameter(torch.full((4,), 0.5))
        self.head = nn.Linear(4, 2)

    def forward(self, tokens):
        weights = torch.softmax(vmap(token_scores, in_dims=(0, None))(tokens, self.query), dim=1)
        return self.head((weights.unsqueeze(-1) * tokens).sum(1))


torch.manual_seed(0)
model = PooledClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens, labels = torch.randn(3, 5, 4), torch.tensor([0, 1, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
