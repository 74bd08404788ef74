# message: `inputs` argument to `backward()` cannot be empty.
# code: AD135 (catalogue: grad_empty_inputs)
# set: 13
# trigger: fine-tuning a partly frozen model with loss.backward(inputs=...) to skip the frozen
#   backbone; the trainable parameters are chosen as those whose .grad is not None, which is none of
#   them before the first backward()
# source: none found; the pattern as users write it (".grad is not None" taken for "is trained")
# results: model, losses
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.backbone(x))


torch.manual_seed(0)
model = Classifier()
model.backbone.requires_grad_(False)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels = torch.randn(5, 3), torch.tensor([0, 1, 1, 0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    trainable = [p for p in model.parameters() if p.grad is not None]  # PRIMARY
    loss = nn.functional.cross_entropy(model(x), labels)
    loss.backward(inputs=trainable)
    optimizer.step()
    losses.append(loss.item())
