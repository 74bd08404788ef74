"""CTC on raw logits: the log_softmax line was commented out.
Source: https://github.com/jeremyfix/deeplearning-lectures/issues/22 (uncomment log_softmax)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
T, B, n_feats, vocab, target_len = 30, 4, 13, 6, 8


class Recognizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(n_feats, 32)
        self.out = nn.Linear(32, vocab)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.out(h)  # T, B, vocab


def wrap_ctc(ctc, predictions, targets, input_lengths, target_lengths):
    # compute the log_softmax
    predictions = predictions.log_softmax(dim=2)  # T, B, vocab_size
    return ctc(predictions, targets, input_lengths, target_lengths)


model = Recognizer()
ctc = nn.CTCLoss(blank=0)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(T, B, n_feats)
targets = torch.randint(1, vocab, (B, target_len))
input_lengths = torch.full((B,), T, dtype=torch.long)
target_lengths = torch.full((B,), target_len, dtype=torch.long)
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = wrap_ctc(ctc, model(x), targets, input_lengths, target_lengths)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
