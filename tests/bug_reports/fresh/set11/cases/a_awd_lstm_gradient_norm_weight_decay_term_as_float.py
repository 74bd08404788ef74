"""Gradient-norm estimation for an AWD-LSTM language model (JingzhaoZhang/why-clipping-accelerates,
main.py `eval_grad`): the loss of each batch is `raw_loss + args.wdecay * total_norm`, where the
weight-decay term is built as `param_normsq = p.grad.data.norm(2)**2; total_norm +=
param_normsq.item()`. It is a Python float (and the norm of the accumulated gradients, not of the
parameters), so it adds a constant to the loss and nothing to the gradients: the gradient norm the
function returns, which the paper's clipping analysis relies on, leaves out the L2 term it was
meant to include (no error, no warning).
Source: https://github.com/JingzhaoZhang/why-clipping-accelerates/issues/3 ("these lines are adding
the l2 regularization on top of the raw loss to perform the same weight decay as implemented in SGD
optimizer. This should be equal to adding `args.wdecay * model_param_norm_squared` ... However, in
the codes you actually computed the gradient l2-norm").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NTOKENS, EMB, HID, BPTT, BATCH, WDECAY = 30, 8, 12, 5, 4, 1.2e-2


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(NTOKENS, EMB)
        self.rnn = nn.LSTM(EMB, HID)
        self.decoder = nn.Linear(HID, NTOKENS)

    def forward(self, data, hidden):
        output, hidden = self.rnn(self.encoder(data), hidden)
        return self.decoder(output), hidden

    def init_hidden(self, bsz):
        return (torch.zeros(1, bsz, HID), torch.zeros(1, bsz, HID))


def repackage_hidden(h):
    return tuple(v.detach() for v in h)


model = RNNModel()
train_data = torch.randint(0, NTOKENS, (4 * BPTT + 1, BATCH))


def eval_grad(model):
    hidden = model.init_hidden(BATCH)
    model.zero_grad()
    batch, i = 0, 0
    while i + BPTT < train_data.size(0):
        data, targets = train_data[i:i + BPTT], train_data[i + 1:i + 1 + BPTT]
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        raw_loss = F.cross_entropy(output.view(-1, NTOKENS), targets.reshape(-1))
        total_norm = 0
        for p in model.parameters():
            if p is None or p.grad is None:
                continue
            param_normsq = p.grad.data.norm(2)**2
            total_norm += param_normsq.item()
        loss = raw_loss + WDECAY * total_norm
        loss.backward()
        batch += 1
        i += BPTT
    gradnorm = 0
    for p in model.parameters():
        gradnorm += p.grad.data.norm(2).item() ** 2
    return torch.tensor(gradnorm ** 0.5 / batch)


result = {"gradnorm": eval_grad(model), "grads": [p.grad.detach().clone() for p in model.parameters()]}
