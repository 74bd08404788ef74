"""Zero-shot sketch-based image retrieval with a class-memory loss: the memory (prototype) loss is
detached before it is added to the classification loss, so it contributes nothing to the
gradients although it is logged and summed every step (no error).
Source: https://github.com/haowang1992/DSN/issues/2 ("loss_memory.grad is none": "`.detach()`
causes loss_memory.grad to be none. It's not being used?").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_CLASSES, DIM = 6, 16


class SketchEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, DIM))
        self.classifier = nn.Linear(DIM, N_CLASSES)

    def forward(self, x):
        feats = F.normalize(self.backbone(x), dim=-1)
        return feats, self.classifier(feats)


def memory_loss(feats, labels, memory, temperature=0.1):
    return F.cross_entropy(feats @ F.normalize(memory, dim=-1).t() / temperature, labels)


model = SketchEncoder()
memory = torch.randn(N_CLASSES, DIM)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
losses = []
for step in range(4):
    sketches, labels = torch.randn(12, 32), torch.randint(0, N_CLASSES, (12,))
    feats, logits = model(sketches)
    loss_cls = F.cross_entropy(logits, labels)
    loss_memory = memory_loss(feats, labels, memory).detach()
    loss = loss_cls + 0.5 * loss_memory
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        memory.index_copy_(0, labels, 0.9 * memory[labels] + 0.1 * feats)
    losses.append(torch.stack([loss_cls.detach(), loss_memory.detach()]))
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
