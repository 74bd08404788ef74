# message: a view of a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_view_inplace)
# set: 6
# trigger: a text classifier's __init__ zeroes the padding row of its embedding with
#   self.embedding.weight[0].zero_() (outside torch.no_grad())
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.embedding.weight[0].zero_()  # PRIMARY
        self.classifier = nn.Linear(4, 2)

    def forward(self, tokens):
        return self.classifier(self.embedding(tokens).mean(1))


torch.manual_seed(0)
model = TextClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens, labels = torch.tensor([[1, 2, 0], [4, 0, 0]]), torch.tensor([0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
