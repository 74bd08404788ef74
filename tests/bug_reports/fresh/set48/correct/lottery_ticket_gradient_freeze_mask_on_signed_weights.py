"""Iterative magnitude pruning for the lottery ticket hypothesis: after each pruning round the
surviving weights are reset to their initial values and retrained, and during retraining the
pruned (zeroed) weights are kept at zero by zeroing their gradients after `loss.backward()`:
`grad_tensor = np.where(tensor < EPS, 0, grad_tensor)`. The test compares the signed weight with
EPS, so every negative surviving weight is frozen too; nothing fails, but about half of the
network never trains. The change the issue proposes (and a commenter confirms restores the
unpruned accuracy): compare the magnitude, `np.where(np.abs(tensor) < EPS, 0, grad_tensor)`.
Source: https://github.com/rahulvigneswaran/Lottery-Ticket-Hypothesis-in-Pytorch/issues/5
expect: silent"""
import copy

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
np.random.seed(0)
device = torch.device("cpu")
EPS = 1e-6


class fc1(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.classifier = nn.Sequential(
            nn.Linear(20, 32),
            nn.ReLU(inplace=True),
            nn.Linear(32, 16),
            nn.ReLU(inplace=True),
            nn.Linear(16, num_classes),
        )

    def forward(self, x):
        return self.classifier(x)


def make_mask(model):
    return [np.ones_like(p.data.cpu().numpy()) for name, p in model.named_parameters() if "weight" in name]


def prune_by_percentile(model, mask, percent):
    step = 0
    for name, param in model.named_parameters():
        if "weight" in name:
            tensor = param.data.cpu().numpy()
            alive = tensor[np.nonzero(tensor)]
            percentile_value = np.percentile(abs(alive), percent)
            new_mask = np.where(abs(tensor) < percentile_value, 0, mask[step])
            param.data = torch.from_numpy(tensor * new_mask).to(device)
            mask[step] = new_mask
            step += 1
    return mask


def original_initialization(model, mask_temp, initial_state_dict):
    step = 0
    for name, param in model.named_parameters():
        if "weight" in name:
            param.data = torch.from_numpy(mask_temp[step] * initial_state_dict[name].cpu().numpy()).to(device)
            step += 1
        if "bias" in name:
            param.data = initial_state_dict[name]


def train(model, train_loader, optimizer, criterion):
    model.train()
    for batch_idx, (imgs, targets) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(imgs)
        train_loss = criterion(output, targets)
        train_loss.backward()

        # Freezing Pruned weights by making their gradients Zero
        for name, p in model.named_parameters():
            if "weight" in name:
                tensor = p.data.cpu().numpy()
                grad_tensor = p.grad.data.cpu().numpy()
                grad_tensor = np.where(np.abs(tensor) < EPS, 0, grad_tensor)
                p.grad.data = torch.from_numpy(grad_tensor).to(device)
        optimizer.step()
    return train_loss.item()


X = torch.randn(96, 20)
Y = (X[:, :3].argmax(dim=1))
train_loader = [(X[i:i + 32], Y[i:i + 32]) for i in range(0, 96, 32)]

model = fc1().to(device)
initial_state_dict = copy.deepcopy(model.state_dict())
mask = make_mask(model)
criterion = nn.CrossEntropyLoss()
losses = []
for _ite in range(2):
    if _ite > 0:
        mask = prune_by_percentile(model, mask, percent=20)
        original_initialization(model, mask, initial_state_dict)
    optimizer = torch.optim.Adam(model.parameters(), lr=1.2e-3)
    for epoch in range(3):
        losses.append(train(model, train_loader, optimizer, criterion))

result = {"losses": losses, "weights": [p.detach().clone() for p in model.parameters()]}
