# message: `inputs` argument to `backward()` cannot be empty.
# code: AD135 (catalogue: grad_empty_inputs)
# set: 11
# trigger: a Trainer-like class trains only the classifier by selecting the parameters whose name
#   starts with "head." and passing them to loss.backward(inputs=...); the model names its
#   classifier `classifier`, so the list is empty
# source: none found; the pattern as users write it (parameters selected by name, the name taken
#   from another model)
# results: trainer.losses, model
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(3, 4), nn.ReLU())
        self.classifier = nn.Linear(4, 2)

    def forward(self, x):
        return self.classifier(self.backbone(x))


class HeadTrainer:
    def __init__(self, model):
        self.model = model
        self.trained = [p for name, p in model.named_parameters() if name.startswith("classifier.")]  # PRIMARY
        self.losses = []

    def step(self, x, y, lr=0.1):
        for p in self.model.parameters():
            p.grad = None
        loss = nn.functional.cross_entropy(self.model(x), y)
        loss.backward(inputs=self.trained)
        with torch.no_grad():
            for p in self.trained:
                p -= lr * p.grad
        self.losses.append(loss.item())


torch.manual_seed(0)
model = Classifier()
trainer = HeadTrainer(model)
x, y = torch.randn(6, 3), torch.tensor([0, 1, 1, 0, 1, 0])
for _ in range(2):
    trainer.step(x, y)
