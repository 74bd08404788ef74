"""Small training steps shaped like the models people train, for benchmarks/overhead.py.

Each `setup()` returns a `step()` that runs one full training step (zero_grad, forward,
loss, backward, optimizer step) on fixed data. The models are small on purpose: the
per-op cost of a tool that watches PyTorch shows only when the kernels themselves are
cheap, as they are in many real steps (small batches, CPU debugging runs, RNNs).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


def tiny_mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def tiny_steps():
    """Many small optimizer steps, like an optimizer's test suite (optimi's: hundreds of
    backward()/step() pairs on small tensors): the doctor's fixed cost per backward() and per
    step() dominates here, not its cost per op."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(8, 16), torch.randn(8, 1)

    def step():
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()

    return step


class BasicBlock(nn.Module):
    """ResNet's basic block: conv-bn-relu(inplace)-conv-bn, residual `+=`, relu(inplace)."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += x
        return self.relu(out)


def resnet():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True),
        BasicBlock(16), BasicBlock(16), BasicBlock(16),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


class CausalSelfAttention(nn.Module):
    """Hand-written attention as in GPT-style code: a causal mask, softmax, dropout."""

    def __init__(self, width: int, heads: int, context: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("mask", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def forward(self, x):
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q = q.view(batch, length, self.heads, -1).transpose(1, 2)
        k = k.view(batch, length, self.heads, -1).transpose(1, 2)
        v = v.view(batch, length, self.heads, -1).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        scores = scores.masked_fill(self.mask[:, :, :length, :length] == 0, float("-inf"))
        weights = self.dropout(F.softmax(scores, dim=-1))
        out = (weights @ v).transpose(1, 2).contiguous().view(batch, length, width)
        return self.proj(out)


class GPTBlock(nn.Module):
    def __init__(self, width: int, heads: int, context: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attention = CausalSelfAttention(width, heads, context)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int = 128, width: int = 64, heads: int = 4, layers: int = 2, context: int = 32):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(context, width)
        self.blocks = nn.Sequential(*[GPTBlock(width, heads, context) for _ in range(layers)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)

    def forward(self, idx):
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.tokens(idx) + self.positions(positions)
        return self.head(self.ln(self.blocks(x)))


def gpt():
    torch.manual_seed(0)
    model = GPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    idx = torch.randint(0, 128, (4, 32))
    targets = torch.randint(0, 128, (4, 32))

    def step():
        optimizer.zero_grad(set_to_none=True)
        logits = model(idx)
        F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return step


class LanguageModel(nn.Module):
    def __init__(self, vocab: int = 100, width: int = 32, hidden: int = 64):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, hidden, num_layers=2, batch_first=True)
        self.drop = nn.Dropout(0.2)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tokens, state):
        output, state = self.lstm(self.embed(tokens), state)
        return self.out(self.drop(output)), state


def lstm():
    """Truncated BPTT: the hidden state is carried (detached) across chunks of a sequence."""
    torch.manual_seed(0)
    model = LanguageModel()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    data = torch.randint(0, 100, (4, 3 * 16 + 1))
    chunk = 16
    state = [None]

    def step():
        for start in range(0, 3 * chunk, chunk):
            inputs = data[:, start:start + chunk]
            targets = data[:, start + 1:start + chunk + 1]
            hidden = state[0]
            if hidden is not None:
                hidden = tuple(h.detach() for h in hidden)
            optimizer.zero_grad()
            logits, state[0] = model(inputs, hidden)
            F.cross_entropy(logits.reshape(-1, 100), targets.reshape(-1)).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optimizer.step()

    return step


class ViT(nn.Module):
    def __init__(self, image: int = 32, patch: int = 8, width: int = 64, heads: int = 4, layers: int = 2):
        super().__init__()
        self.patches = nn.Conv2d(3, width, patch, stride=patch)
        count = (image // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, width))
        self.positions = nn.Parameter(torch.randn(1, count + 1, width) * 0.02)
        layer = nn.TransformerEncoderLayer(width, heads, 2 * width, dropout=0.1, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, 10)

    def forward(self, images):
        x = self.patches(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1) + self.positions
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))


def vit():
    torch.manual_seed(0)
    model = ViT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    images, labels = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))

    def step():
        optimizer.zero_grad()
        F.cross_entropy(model(images), labels).backward()
        optimizer.step()

    return step


# name -> setup; the order is the table's.
WORKLOADS = {
    "ResNet-style (3 blocks, 16 ch, SGD momentum)": resnet,
    "GPT-style (2 layers, d=64, AdamW)": gpt,
    "LSTM LM (2 layers, BPTT x3, clip)": lstm,
    "ViT-style (2 layers, d=64, AdamW)": vit,
    "tiny MLP (width 64, batch 32)": tiny_mlp,
    "Tiny steps (MLP width 16, Adam, batch 8)": tiny_steps,
}
