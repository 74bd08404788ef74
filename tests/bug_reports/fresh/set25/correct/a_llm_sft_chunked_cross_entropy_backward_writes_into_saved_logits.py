"""Supervised fine-tuning of a small causal LM with ms-swift's memory-saving loss
(`ChunkedCrossEntropyLoss`, a custom `torch.autograd.Function` used when CELOSS_PARALLEL_SIZE is
set): its backward recomputes the cross entropy chunk by chunk and writes each chunk's gradient
back into the logits tensor it saved (`logits[l_start:l_end] = grad_chunk`), then returns that
tensor as the gradient. The model also puts an auxiliary z-loss on the same logits (computed in
its forward), whose backward needs the logits too: the chunked backward runs first and
overwrites them, and backward() raises "one of the variables needed for gradient computation
has been modified by an inplace operation". The merged fix (PR #10130, "ChunkedCrossEntropyLoss.
backward overwrites the saved logits with gradients ... a shared auxiliary loss can raise a
version-counter error") allocates a separate gradient tensor and fills it chunk by chunk.
Source: https://github.com/modelscope/ms-swift/pull/10130
expect: raises"""
import math

import torch
import torch.nn as nn
from torch.nn import CrossEntropyLoss

torch.manual_seed(0)

VOCAB, HIDDEN, CHUNK_SIZE, Z_LOSS_WEIGHT = 32, 16, 5, 1e-3


class ChunkedCrossEntropyLoss(torch.autograd.Function):

    @staticmethod
    def forward(ctx, logits, labels, chunk_size):
        ctx.save_for_backward(logits, labels)
        ctx.chunk_size = chunk_size
        losses = []
        for i in range(math.ceil(logits.shape[0] / chunk_size)):
            l_start = i * chunk_size
            l_end = min((i + 1) * chunk_size, logits.shape[0])
            loss_fct = CrossEntropyLoss(reduction='none')
            losses.append(loss_fct(logits[l_start:l_end], labels[l_start:l_end]))
        return torch.cat(losses)

    @staticmethod
    def backward(ctx, *grad_outputs):
        logits, labels = ctx.saved_tensors
        chunk_size = ctx.chunk_size
        grad_logits = torch.empty_like(logits)
        for i in range(math.ceil(logits.shape[0] / chunk_size)):
            l_start = i * chunk_size
            l_end = min((i + 1) * chunk_size, logits.shape[0])
            logits_chunk = logits[l_start:l_end].detach().requires_grad_(True)
            labels_chunk = labels[l_start:l_end]
            loss_fct = CrossEntropyLoss(reduction='none')
            with torch.enable_grad():
                loss_chunk = loss_fct(logits_chunk, labels_chunk)
                _loss_chunk = (loss_chunk * grad_outputs[0][l_start:l_end]).sum()
                grad_chunk = torch.autograd.grad(_loss_chunk, logits_chunk, retain_graph=False)[0]
            grad_logits[l_start:l_end] = grad_chunk
        return grad_logits, None, None


class TinyCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.rnn = nn.GRU(HIDDEN, HIDDEN, batch_first=True)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids):
        hidden, _ = self.rnn(self.embed_tokens(input_ids))
        logits = self.lm_head(hidden)
        z_loss = Z_LOSS_WEIGHT * torch.logsumexp(logits, dim=-1).pow(2).mean()
        return logits, z_loss


def loss_func(logits, labels, chunk_size):
    logits = logits.view(-1, logits.shape[-1])
    labels = labels.flatten()
    loss = ChunkedCrossEntropyLoss.apply(logits, labels, chunk_size)
    mask = labels != -100
    return loss[mask].sum() / mask.sum()


def make_batch(batch_size=3, seq_len=6, prompt_len=2):
    input_ids = torch.randint(0, VOCAB, (batch_size, seq_len))
    labels = torch.roll(input_ids, shifts=-1, dims=1)
    labels[:, :prompt_len] = -100
    labels[:, -1] = -100
    return input_ids, labels


model = TinyCausalLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
batches = [make_batch() for _ in range(4)]

losses = []
for input_ids, labels in batches:
    logits, z_loss = model(input_ids)
    loss = loss_func(logits, labels, CHUNK_SIZE) + z_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {
    "losses": torch.tensor(losses),
    "parameters": [p.detach().clone() for p in model.parameters()],
}
