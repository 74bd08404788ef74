"""MAE-DFER (dynamic facial expression recognition): the local-global
interaction block gathers one "messenger" token per window,
`messenger_tokens = rearrange(x[:, 0], '(b n) c -> b n c', b=b)`, runs
attention over them and writes the result back into the same rows,
`x[:, 0] = messenger_tokens...`.  The attention's layer norm kept a view of
`x` (the basic index `x[:, 0]`), so fine-tuning fails at `loss.backward()`
("output 0 of AsStridedBackward0, is at version 2; expected version 0");
the reported fix is `x[:, 0].clone()`.
Source: https://github.com/sunlicai/MAE-DFER/issues/15"""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = attn.softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


class LGBlock(nn.Module):
    def __init__(self, dim=8, num_heads=2):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, num_heads)
        self.messenger_norm = nn.LayerNorm(dim)
        self.messenger_attn = Attention(dim, num_heads)

    def forward(self, x, b):
        # x: (b * n, 1 + window tokens, c); token 0 of each window is its messenger
        x = x + self.attn(self.norm1(x))
        bn, _, c = x.shape
        messenger_tokens = x[:, 0].reshape(b, bn // b, c)
        messenger_tokens = messenger_tokens + self.messenger_attn(self.messenger_norm(messenger_tokens))
        x[:, 0] = messenger_tokens.reshape(bn, c)  # missed: ADL001
        return x


class Encoder(nn.Module):
    def __init__(self, dim=8, num_classes=3):
        super().__init__()
        self.patch_embed = nn.Linear(4, dim)
        self.blocks = nn.ModuleList([LGBlock(dim) for _ in range(2)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, patches, b):
        x = self.patch_embed(patches)
        for blk in self.blocks:
            x = blk(x, b)
        return self.head(x.mean(dim=1).reshape(b, -1, x.shape[-1]).mean(dim=1))


def finetune(model, loader):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for patches, b, labels in loader:
        loss = criterion(model(patches, b), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    finetune(Encoder(), [(torch.randn(2 * 3, 5, 4), 2, torch.tensor([0, 2]))])
