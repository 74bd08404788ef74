"""prime-rl, pull request 909 ("Fix micro step logging"): in the SFT trainer each optimizer step
runs `grad_accum_steps` micro-batches; every micro-batch's loss is averaged over its unmasked
tokens, divided by the accumulation count, backpropagated, and added into `batch_loss`, which is
only read for logging after the step.  `batch_loss += loss` adds the loss tensor itself: every
micro-batch's graph stays reachable from `batch_loss` until the step's logging is done, and the
reviewer asks for `loss.detach()`.
Re-created in my own words with the trainer's structure: a config dataclass, a tiny causal
language model, micro-batches of packed token ids with a loss mask, the micro-step loop inside
the step loop, gradient clipping, and the per-step log record.
Nothing raises: `bug_shows()` shows the logged batch loss still attached to a graph.
Buggy line: `batch_loss += loss`.
Source: https://github.com/PrimeIntellect-ai/prime-rl/pull/909"""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class SFTConfig:
    vocab_size: int = 32
    hidden: int = 16
    seq_len: int = 8
    micro_batch_size: int = 2
    grad_accum_steps: int = 3
    max_steps: int = 2
    lr: float = 1e-3
    max_norm: float = 1.0


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.mixer = nn.GRU(hidden, hidden, batch_first=True)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids):
        hidden, _ = self.mixer(self.embed(input_ids))
        return self.lm_head(hidden)


def make_micro_batches(config, step):
    generator = torch.Generator().manual_seed(step)
    micro_batches = []
    for _ in range(config.grad_accum_steps):
        input_ids = torch.randint(0, config.vocab_size, (config.micro_batch_size, config.seq_len), generator=generator)
        target_ids = torch.roll(input_ids, shifts=-1, dims=1)
        loss_mask = torch.rand(config.micro_batch_size, config.seq_len, generator=generator) > 0.3
        micro_batches.append({"input_ids": input_ids, "target_ids": target_ids, "loss_mask": loss_mask})
    return micro_batches


def train(config):
    torch.manual_seed(0)
    model = TinyCausalLM(config.vocab_size, config.hidden)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    history = []
    for step in range(config.max_steps):
        micro_batches = make_micro_batches(config, step)
        batch_loss = torch.tensor(0.0)
        for micro_step, micro_batch in enumerate(micro_batches):
            logits = model(micro_batch["input_ids"])
            loss = F.cross_entropy(logits.flatten(0, 1), micro_batch["target_ids"].flatten(), reduction="none")
            loss = loss.view(config.micro_batch_size, config.seq_len)

            # Compute average loss over unmasked tokens
            loss = loss[micro_batch["loss_mask"]].mean()

            # Scale loss by number of gradient accumulation steps
            loss /= config.grad_accum_steps

            # Accumulate loss
            batch_loss += loss  # expect: ADL023

            loss.backward()

        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=config.max_norm)
        optimizer.step()
        optimizer.zero_grad()
        history.append({"step": step, "loss": batch_loss, "grad_norm": grad_norm.item()})
    return history


def run():
    return train(SFTConfig())


def bug_shows():
    history = run()
    return history[-1]["loss"].grad_fn is not None
