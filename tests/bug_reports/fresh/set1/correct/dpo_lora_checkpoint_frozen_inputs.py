"""DPO on a LoRA model with gradient checkpointing: the embeddings are frozen, so the reentrant
checkpoint's inputs do not require grad and the loss has no grad_fn ("element 0 of tensors does
not require grad").
Source: https://github.com/huggingface/trl/issues/814 (and #801; fix: make the checkpoint's input
require grad, as `model.enable_input_require_grads()` does).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)


class TinyLoraLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 6)
        self.embed.weight.requires_grad_(False)
        self.base = nn.Linear(6, 6)
        self.base.weight.requires_grad_(False)
        self.base.bias.requires_grad_(False)
        self.lora_a = nn.Linear(6, 2, bias=False)
        self.lora_b = nn.Linear(2, 6, bias=False)
        self.head = nn.Linear(6, 10)
        self.head.requires_grad_(False)

    def block(self, h):
        return torch.tanh(self.base(h) + self.lora_b(self.lora_a(h)))

    def forward(self, ids):
        h = self.embed(ids).requires_grad_()
        h = checkpoint(self.block, h, use_reentrant=True)
        return self.head(h)


def sequence_logp(model, ids):
    logp = F.log_softmax(model(ids[:, :-1]), -1)
    return logp.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1).sum(-1)


policy = TinyLoraLM()
nn.init.normal_(policy.lora_b.weight)
chosen = torch.randint(0, 10, (2, 5))
rejected = torch.randint(0, 10, (2, 5))
ref_chosen, ref_rejected = torch.randn(2), torch.randn(2)
beta = 0.1

margin = (sequence_logp(policy, chosen) - ref_chosen) - (sequence_logp(policy, rejected) - ref_rejected)
loss = -F.logsigmoid(beta * margin).mean()
loss.backward()
result = {"loss": loss.detach(), "a": policy.lora_a.weight.grad, "b": policy.lora_b.weight.grad}
