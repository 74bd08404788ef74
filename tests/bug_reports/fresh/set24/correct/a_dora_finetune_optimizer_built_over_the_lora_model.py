"""Comparing LoRA and DoRA fine-tuning of a small pretrained MLP (rasbt/dora-from-scratch,
`lora-dora-mlp.ipynb`): the pretrained model is deep-copied twice, the copies' linear layers are
wrapped in `LinearWithLoRA` / `LinearWithDoRA`, the linear layers are frozen, and each copy is
fine-tuned with the notebook's `train()` helper. The DoRA optimizer was built with
`torch.optim.Adam(model_lora.parameters(), ...)`: backward() writes gradients into the DoRA
model's adapters and magnitudes, but `step()` updates only the LoRA model (whose gradients
`zero_grad()` has just cleared), so the DoRA model never trains and its gradients pile up. No
error. The merged fix (PR #1, "omg, how did I miss that. This explains why I got some weird
results") builds the optimizer over `model_dora.parameters()`.
Source: https://github.com/rasbt/dora-from-scratch/pull/1
expect: silent"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(123)

num_features, num_hidden_1, num_hidden_2, num_classes = 20, 16, 24, 4
learning_rate = 0.005
num_epochs = 2

features_all = torch.randn(96, num_features)
targets_all = (features_all[:, :num_classes] * 3).argmax(dim=1)
train_loader = [(features_all[i:i + 16], targets_all[i:i + 16]) for i in range(0, 96, 16)]


class MultilayerPerceptron(nn.Module):
    def __init__(self, num_features, num_hidden_1, num_hidden_2, num_classes):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(num_features, num_hidden_1),
            nn.ReLU(),
            nn.Linear(num_hidden_1, num_hidden_2),
            nn.ReLU(),
            nn.Linear(num_hidden_2, num_classes),
        )

    def forward(self, x):
        return self.layers(x)


def train(num_epochs, model, optimizer, train_loader, losses):
    for epoch in range(num_epochs):
        model.train()
        for batch_idx, (features, targets) in enumerate(train_loader):
            logits = model(features)
            loss = F.cross_entropy(logits, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())


class LoRALayer(nn.Module):
    def __init__(self, in_dim, out_dim, rank, alpha):
        super().__init__()
        std_dev = 1 / torch.sqrt(torch.tensor(rank).float())
        self.A = nn.Parameter(torch.randn(in_dim, rank) * std_dev)
        self.B = nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def forward(self, x):
        return self.alpha * (x @ self.A @ self.B)


class LinearWithLoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)

    def forward(self, x):
        return self.linear(x) + self.lora(x)


class LinearWithDoRA(nn.Module):
    def __init__(self, linear, rank, alpha):
        super().__init__()
        self.linear = linear
        self.lora = LoRALayer(linear.in_features, linear.out_features, rank, alpha)
        self.m = nn.Parameter(torch.ones(1, linear.out_features))

    def forward(self, x):
        linear_output = self.linear(x)
        lora_output = self.lora(x)
        lora_output_norm = lora_output / (lora_output.norm(p=2, dim=1, keepdim=True) + 1e-9)
        return linear_output + self.m * lora_output_norm


def freeze_linear_layers(model):
    for child in model.children():
        if isinstance(child, nn.Linear):
            for param in child.parameters():
                param.requires_grad = False
        else:
            freeze_linear_layers(child)


model_pretrained = MultilayerPerceptron(num_features, num_hidden_1, num_hidden_2, num_classes)
optimizer_pretrained = torch.optim.Adam(model_pretrained.parameters(), lr=learning_rate)
pretrain_losses = []
train(num_epochs, model_pretrained, optimizer_pretrained, train_loader, pretrain_losses)

model_lora = copy.deepcopy(model_pretrained)
model_dora = copy.deepcopy(model_pretrained)
for i in (0, 2, 4):
    model_lora.layers[i] = LinearWithLoRA(model_lora.layers[i], rank=4, alpha=8)
    model_dora.layers[i] = LinearWithDoRA(model_dora.layers[i], rank=4, alpha=8)

freeze_linear_layers(model_lora)
optimizer_lora = torch.optim.Adam(model_lora.parameters(), lr=learning_rate)
lora_losses = []
train(num_epochs, model_lora, optimizer_lora, train_loader, lora_losses)

freeze_linear_layers(model_dora)
optimizer_dora = torch.optim.Adam(model_dora.parameters(), lr=learning_rate)
dora_losses = []
train(num_epochs, model_dora, optimizer_dora, train_loader, dora_losses)

result = {
    "lora_losses": torch.tensor(lora_losses),
    "dora_losses": torch.tensor(dora_losses),
    "lora": [p.detach().clone() for p in model_lora.parameters()],
    "dora": [p.detach().clone() for p in model_dora.parameters()],
}
