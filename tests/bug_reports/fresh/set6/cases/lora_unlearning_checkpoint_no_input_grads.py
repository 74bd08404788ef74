"""Machine unlearning of a language model with LoRA adapters and gradient checkpointing: the base
model (embeddings included) is frozen, the transformer blocks run under reentrant checkpointing, and
nothing makes the embedding output require grad, so the adapters inside the checkpointed blocks
never receive a gradient; only the adapter on the output head trains (no error).
Source: https://github.com/locuslab/open-unlearning/issues/178 ("PEFT LoRA transformer layers not
trained when gradient_checkpointing=True: enable_input_require_grads() missing").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
VOCAB, DIM = 40, 16


class LoRALinear(nn.Module):
    def __init__(self, base, rank=2):
        super().__init__()
        self.base = base
        self.lora_A = nn.Parameter(torch.randn(rank, base.in_features) * 0.1)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x):
        return self.base(x) + x @ self.lora_A.t() @ self.lora_B.t()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = LoRALinear(nn.Linear(DIM, DIM))

    def forward(self, h):
        return h + torch.tanh(self.fc(h))


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList([Block() for _ in range(2)])
        self.lm_head = LoRALinear(nn.Linear(DIM, VOCAB))

    def enable_input_require_grads(self):
        self.embed.register_forward_hook(lambda module, inputs, output: output.requires_grad_(True))

    def forward(self, tokens):
        h = self.embed(tokens)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=True)
        return self.lm_head(h)


model = TinyLM()
for name, p in model.named_parameters():
    p.requires_grad_("lora_" in name)
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=5e-2)
forget = torch.randint(0, VOCAB, (4, 6))
losses = []
for step in range(4):
    logits = model(forget[:, :-1])
    loss = -F.cross_entropy(logits.reshape(-1, VOCAB), forget[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "lora": [p.detach().clone() for n, p in model.named_parameters() if "lora_" in n]}
