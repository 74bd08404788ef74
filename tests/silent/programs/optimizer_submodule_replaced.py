"""Fine-tuning: the classifier head is replaced after the optimizer was built from the model's
parameters, so the optimizer holds the old head and the new one never trains."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 5)
        self.head = nn.Linear(5, 10)

    def forward(self, x):
        return self.head(torch.relu(self.body(x)))


model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
model.head = nn.Linear(5, 3)  # PRIMARY
x, labels = torch.randn(12, 6), torch.randint(0, 3, (12,))
for _ in range(3):
    loss = nn.functional.cross_entropy(model(x), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
