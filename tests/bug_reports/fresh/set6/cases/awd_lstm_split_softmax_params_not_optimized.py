"""Word-level language model (AWD-LSTM) with a split cross-entropy (adaptive softmax): the loss
module has its own parameters (the tail vectors and bias that choose the vocabulary split), but the
optimizer is built from `model.parameters()` only, so those parameters get gradients and are never
updated (no error).
Source: https://github.com/salesforce/awd-lstm-lm/issues/30 ("Parameters in SplitCrossEntropyLoss
are not being updated since they are missing from the optimizer"; maintainer: "this is very much an
issue, and indeed a bug I had and then fixed"; the fix passes `criterion.parameters()` too).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM, SPLIT = 30, 16, 10


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, DIM)
        self.rnn = nn.LSTM(DIM, DIM, batch_first=True)

    def forward(self, tokens):
        output, _ = self.rnn(self.encoder(tokens))
        return output


class SplitCrossEntropyLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.tail_vectors = nn.Parameter(torch.zeros(1, DIM))
        self.tail_bias = nn.Parameter(torch.zeros(1))

    def forward(self, weight, bias, hiddens, targets):
        head_logits = hiddens @ weight[:SPLIT].t() + bias[:SPLIT]
        tail_logit = hiddens @ self.tail_vectors.t() + self.tail_bias
        head_logprob = F.log_softmax(torch.cat([head_logits, tail_logit], -1), -1)
        tail_logprob = F.log_softmax(hiddens @ weight[SPLIT:].t() + bias[SPLIT:], -1)
        in_head = targets < SPLIT
        head_part = head_logprob.gather(1, targets.clamp(max=SPLIT - 1)[:, None]).squeeze(1)
        tail_part = head_logprob[:, -1] + tail_logprob.gather(1, (targets - SPLIT).clamp(min=0)[:, None]).squeeze(1)
        return -torch.where(in_head, head_part, tail_part).mean()


model = RNNModel()
decoder = nn.Linear(DIM, VOCAB)
criterion = SplitCrossEntropyLoss()
params = list(model.parameters()) + list(decoder.parameters())
optimizer = torch.optim.SGD(params, lr=1.0)
losses = []
for step in range(4):
    tokens = torch.randint(0, VOCAB, (4, 9))
    hiddens = model(tokens[:, :-1]).reshape(-1, DIM)
    loss = criterion(decoder.weight, decoder.bias, hiddens, tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "criterion": [p.detach().clone() for p in criterion.parameters()],
          "model": [p.detach().clone() for p in params]}
