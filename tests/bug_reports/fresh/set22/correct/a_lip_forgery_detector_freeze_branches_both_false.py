"""Training a lip-sync forgery detector (AaronComo/LipFD, `trainer/trainer.py`): with `fix_encoder`
on, the trainer walks `named_parameters()` to freeze the pretrained encoder and keep the rest
trainable, but both branches of the `if` assign `p.requires_grad = False`, so every parameter is
frozen and the optimizer is given `model.parameters()`. The first `loss.backward()` raises
"element 0 of tensors does not require grad and does not have a grad_fn". The fix the reporter
confirmed: the `else` branch sets `p.requires_grad = True`.
Source: https://github.com/AaronComo/LipFD/issues/18
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class LipDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(12, 16), nn.ReLU())
        self.region = nn.Linear(16, 8)
        self.classifier = nn.Linear(8, 1)

    def forward(self, x):
        return self.classifier(torch.relu(self.region(self.encoder(x)))).view(-1)


def build(fix_encoder=True):
    model = LipDetector()
    if fix_encoder:
        for name, p in model.named_parameters():
            if name.split(".")[0] in ["encoder"]:
                p.requires_grad = False
            else:
                p.requires_grad = True
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    return model, optimizer


model, optimizer = build()
criterion = nn.BCEWithLogitsLoss()
frames = torch.randn(16, 12)
labels = (torch.rand(16) > 0.5).float()

losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = criterion(model(frames), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
