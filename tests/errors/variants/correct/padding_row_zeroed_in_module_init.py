import torch
from torch import nn
import torch.nn.functional as F


class TextClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        with torch.no_grad():
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
