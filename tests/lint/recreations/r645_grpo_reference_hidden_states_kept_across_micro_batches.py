"""A pull request on unsloth-zoo (GRPO training utilities), "Detach hidden
states to avoid gradient carry": the old-policy and reference hidden states
were computed once per batch with gradients on and reused by every
micro-batch, so gradient flowed across micro-batches through them.
Re-created as a tiny language model, a GRPO-style trainer that computes the
reference model's hidden states for the whole batch with gradients on (the
reference shares the policy's embedding) and then loops over micro-batches,
each computing a KL-penalised loss against its slice of those states and
calling `backward()` (gradient accumulation).  Raises at the second
micro-batch's backward ("Trying to backward through the graph a second
time"): the reference states' graph was freed by the first.
Buggy line: `ref_hidden = self.ref_model(input_ids)` (kept with its graph
across the micro-batches' backward calls).
Source: https://github.com/unslothai/unsloth-zoo/pull/345"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=20, dim=16, embed=None):
        super().__init__()
        self.embed = embed if embed is not None else nn.Embedding(vocab, dim)
        self.block = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.lm_head = nn.Linear(dim, vocab)

    def forward(self, input_ids):
        return self.block(self.embed(input_ids))


class GRPOTrainer:
    def __init__(self, model, ref_model, micro_batches=2, beta=0.1):
        self.model = model
        self.ref_model = ref_model
        self.micro_batches = micro_batches
        self.beta = beta
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def training_step(self, input_ids, advantages):
        ref_hidden = self.ref_model(input_ids)  # missed: ADL019
        self.optimizer.zero_grad()
        for ids, adv, ref_h in zip(input_ids.chunk(self.micro_batches),
                                   advantages.chunk(self.micro_batches),
                                   ref_hidden.chunk(self.micro_batches)):
            logp = F.log_softmax(self.model.lm_head(self.model(ids)), dim=-1)
            ref_logp = F.log_softmax(self.model.lm_head(ref_h), dim=-1)
            token_logp = logp[:, :-1].gather(-1, ids[:, 1:, None]).squeeze(-1)
            kl = (logp.exp() * (logp - ref_logp)).sum(-1).mean()
            loss = -(token_logp.mean(-1) * adv).mean() + self.beta * kl
            (loss / self.micro_batches).backward()
        self.optimizer.step()


def run():
    torch.manual_seed(0)
    model = TinyLM()
    ref_model = TinyLM(embed=model.embed)
    trainer = GRPOTrainer(model, ref_model)
    for _ in range(2):
        trainer.training_step(torch.randint(0, 20, (4, 6)), torch.randn(4))
