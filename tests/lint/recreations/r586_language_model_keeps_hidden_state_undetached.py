"""A fast.ai forum thread on chapter 12's language models (`LMModel4`,
`LMModel5`): the hidden state is kept on the module between batches
(`self.h`), and the chapter's point is that it must be detached after each
batch, or the next backward runs into the previous batch's freed graph.
Re-created as the thread's `LMModel4` shape with the detach left out (as
readers first write it): embedding, hidden-to-hidden linear, output
linear, `self.h` carried across calls, `reset()`, and a training loop over
consecutive chunks.  Raises "Trying to backward through the graph a second
time" at the second batch.
Buggy line: `self.h = h` (the state kept with its graph; the chapter writes
`self.h = h.detach()`).
Source: https://forums.fast.ai/t/rnn-hidden-state-initializations-chapter-12/91887"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LMModel4(nn.Module):
    def __init__(self, vocab_sz, n_hidden, seq_len=3):
        super().__init__()
        self.i_h = nn.Embedding(vocab_sz, n_hidden)
        self.h_h = nn.Linear(n_hidden, n_hidden)
        self.h_o = nn.Linear(n_hidden, vocab_sz)
        self.seq_len = seq_len
        self.h = 0

    def forward(self, x):
        outs = []
        h = self.h
        for i in range(self.seq_len):
            h = h + self.i_h(x[:, i])
            h = F.relu(self.h_h(h))
            outs.append(self.h_o(h))
        self.h = h  # expect: ADL017
        return torch.stack(outs, dim=1)

    def reset(self):
        self.h = 0


def train(model, chunks, lr=1e-2):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    model.reset()
    for xb, yb in chunks:
        out = model(xb)
        loss = F.cross_entropy(out.reshape(-1, out.size(-1)), yb.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()


def run():
    torch.manual_seed(0)
    model = LMModel4(vocab_sz=10, n_hidden=8)
    chunks = [(torch.randint(0, 10, (4, 3)), torch.randint(0, 10, (4, 3))) for _ in range(3)]
    train(model, chunks)
