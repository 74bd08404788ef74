# message: grad can be implicitly created only for scalar outputs
# code: AD112 (catalogue: backward_non_scalar)
# trigger: a Hugging Face-style model returns {"logits", "loss"} with per-example losses
#   (reduction="none"); a Trainer-like training_step calls outputs["loss"].backward()
# source: none found; the pattern as users write it
# results: model
import torch
from torch import nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, labels):
        logits = self.fc(x)
        loss = F.cross_entropy(logits, labels, reduction="none")
        return {"logits": logits, "loss": loss}


def training_step(model, batch):
    outputs = model(**batch)
    outputs["loss"].backward()  # PRIMARY
    return outputs


torch.manual_seed(0)
model = Classifier()
batch = {"x": torch.randn(6, 4), "labels": torch.tensor([0, 2, 1, 1, 0, 2])}
training_step(model, batch)
