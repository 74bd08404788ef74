"""Compressive Transformer language model (lucidrains/compressive-transformer-pytorch): each
attention layer compresses the memories it evicts with a strided convolution, and an auxiliary
attention-reconstruction loss trains that compression network (attention over the old memories vs
attention over their compressed version). The layer detached every input of the reconstruction,
`q, old_mem_k, old_mem_v, cmem_k, cmem_v = map(torch.detach, ...)`, including the keys and values
computed from the compressed memories, so the auxiliary loss reaches no parameter at all: the
compression convolution never gets a gradient and keeps its initial weights, while the loss value
is printed and added to the language-model loss as usual (no error, no warning).
Source: https://github.com/lucidrains/compressive-transformer-pytorch/issues/5 ("it seems like
aux_loss is not related to any weight because of the detaching in the last part of the
SelfAttention layer"; fixed in commit d34aab1, "make sure auxiliary loss actually optimizes the
compression net").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, HEADS, SEQ, MEM_LEN, CMEM_LEN, RATIO, BATCH = 20, 8, 2, 4, 4, 4, 2, 2


def full_attn(q, k, v):
    dots = torch.einsum("bhid,bhjd->bhij", q, k) * (q.shape[-1] ** -0.5)
    return torch.einsum("bhij,bhjd->bhid", dots.softmax(dim=-1), v)


class ConvCompress(nn.Module):
    def __init__(self, dim, ratio):
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, ratio, stride=ratio)

    def forward(self, mem):
        return self.conv(mem.transpose(1, 2)).transpose(1, 2)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.compress_mem_fn = ConvCompress(DIM, RATIO)
        self.to_q = nn.Linear(DIM, DIM, bias=False)
        self.to_kv = nn.Linear(DIM, 2 * DIM, bias=False)
        self.to_out = nn.Linear(DIM, DIM)

    def heads(self, x):
        b, n, _ = x.shape
        return x.reshape(b, n, HEADS, DIM // HEADS).transpose(1, 2)

    def forward(self, x, mem, cmem):
        b, t, _ = x.shape
        q = self.heads(self.to_q(x))
        k, v = self.to_kv(torch.cat((cmem, mem, x), dim=1)).chunk(2, dim=-1)
        k, v = self.heads(k), self.heads(v)
        out = full_attn(q, k, v).transpose(1, 2).reshape(b, t, DIM)
        logits = self.to_out(out)

        # The oldest memories leave the memory and are compressed.
        queue = torch.cat((mem, x), dim=1)
        old_mem, new_mem = queue[:, :-MEM_LEN], queue[:, -MEM_LEN:]
        compressed_mem = self.compress_mem_fn(old_mem.detach())
        new_cmem = torch.cat((cmem, compressed_mem), dim=1)[:, -CMEM_LEN:]

        # Auxiliary loss: attention over the compressed memories should reconstruct attention
        # over the memories they replace.
        # The reconstruction trains the compression network only: to_kv's weight enters it
        # without its gradient (the fix's intent; its own `self.to_kv.weight.detach_()`
        # would also stop the language-model loss from training to_kv).
        cmem_k, cmem_v = F.linear(compressed_mem, self.to_kv.weight.detach()).chunk(2, dim=-1)
        cmem_k, cmem_v = self.heads(cmem_k), self.heads(cmem_v)
        old_range = slice(cmem.shape[1], cmem.shape[1] + old_mem.shape[1])
        old_mem_k, old_mem_v = k[:, :, old_range].clone(), v[:, :, old_range].clone()
        q, old_mem_k, old_mem_v = map(torch.detach, (q, old_mem_k, old_mem_v))
        aux_loss = F.mse_loss(full_attn(q, old_mem_k, old_mem_v), full_attn(q, cmem_k, cmem_v))
        return logits, new_mem, new_cmem, aux_loss


class CompressiveLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.attn = SelfAttention()
        self.to_logits = nn.Linear(DIM, VOCAB)

    def forward(self, tokens, mem, cmem):
        hidden, new_mem, new_cmem, aux_loss = self.attn(self.embed(tokens), mem, cmem)
        return self.to_logits(hidden), new_mem, new_cmem, aux_loss


model = CompressiveLM()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
sequence = torch.randint(0, VOCAB, (BATCH, 4 * SEQ + 1))

mem = torch.zeros(BATCH, MEM_LEN, DIM)
cmem = torch.zeros(BATCH, CMEM_LEN, DIM)
losses = []
for start in range(0, 4 * SEQ, SEQ):
    tokens, targets = sequence[:, start:start + SEQ], sequence[:, start + 1:start + SEQ + 1]
    logits, mem, cmem, aux_loss = model(tokens, mem, cmem)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    optimizer.zero_grad()
    (loss + aux_loss).backward()
    optimizer.step()
    # Memories are carried to the next segment without their graph.
    mem, cmem = mem.detach(), cmem.detach()
    losses.append(torch.stack([loss.detach(), aux_loss.detach()]))

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
