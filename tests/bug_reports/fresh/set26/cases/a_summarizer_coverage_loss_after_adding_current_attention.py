"""Abstractive summarization with a coverage-attention decoder (OpenNMT-py's `coverage_attn` with
`lambda_coverage`, after See et al. 2017): at each decoder step the coverage vector is updated
with the step's attention *before* the coverage loss `sum(min(a_t, c_t))` is taken, so `c_t`
already contains `a_t`, the minimum is always `a_t` and the "coverage loss" is the sum of an
attention distribution: a constant 1 per step whose gradient is zero. Nothing fails; repetition
is never penalised. The reporter: "`coverage` seems containing `t` at timestep t, and it should be
sum from `0` to `t-1`"; the maintainer: "It actually seems like a mistake to me, `a^t` being
included in the summation we have `min(a^t, c^t) = a^t` which does not really make sense."
(the loss uses the coverage of the previous steps).
Source: https://github.com/OpenNMT/OpenNMT-py/issues/2013
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, EMB, HID = 20, 12, 16


class CoverageAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_context = nn.Linear(HID, HID, bias=False)
        self.linear_query = nn.Linear(HID, HID)
        self.linear_cover = nn.Linear(1, HID, bias=False)
        self.v = nn.Linear(HID, 1, bias=False)

    def forward(self, query, memory_bank, coverage):
        hidden = self.linear_context(memory_bank) + self.linear_query(query).unsqueeze(1)
        hidden = hidden + self.linear_cover(coverage.unsqueeze(-1))
        align = self.v(torch.tanh(hidden)).squeeze(-1)
        p_attn = F.softmax(align, dim=-1)
        context = torch.bmm(p_attn.unsqueeze(1), memory_bank).squeeze(1)
        return context, p_attn


class Summarizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, EMB)
        self.encoder = nn.GRU(EMB, HID, batch_first=True)
        self.decoder_cell = nn.GRUCell(EMB + HID, HID)
        self.attn = CoverageAttention()
        self.generator = nn.Linear(2 * HID, VOCAB)

    def forward(self, src, tgt_in):
        memory_bank, state = self.encoder(self.embeddings(src))
        state = state.squeeze(0)
        context = torch.zeros_like(state)
        coverage = torch.zeros(src.shape)
        logits, cov_losses = [], []
        for t in range(tgt_in.shape[1]):
            state = self.decoder_cell(torch.cat([self.embeddings(tgt_in[:, t]), context], dim=-1), state)
            context, p_attn = self.attn(state, memory_bank, coverage)
            coverage = coverage + p_attn
            cov_losses.append(torch.min(p_attn, coverage).sum(dim=-1))
            logits.append(self.generator(torch.cat([state, context], dim=-1)))
        return torch.stack(logits, dim=1), torch.stack(cov_losses, dim=1)


def make_batches(n=4, batch=4, src_len=8, tgt_len=5):
    batches = []
    for _ in range(n):
        src = torch.randint(2, VOCAB, (batch, src_len))
        tgt = src[:, :tgt_len].flip(1)
        tgt_in = torch.cat([torch.ones(batch, 1, dtype=torch.long), tgt[:, :-1]], dim=1)
        batches.append((src, tgt_in, tgt))
    return batches


model = Summarizer()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
lambda_coverage = 1.0
history = []
for epoch in range(3):
    for src, tgt_in, tgt in make_batches():
        logits, cov_loss = model(src, tgt_in)
        nll = F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1))
        loss = nll + lambda_coverage * cov_loss.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append([nll.item(), cov_loss.mean().item()])

result = {"history": torch.tensor(history), "params": [p.detach().clone() for p in model.parameters()]}
