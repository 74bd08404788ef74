"""gru_ode_bayes (GRU-ODE-Bayes): the Climate and MIMIC training loops call the
model, which returns the hidden state, the negative log-likelihood loss and a
second term of that loss (`loss_1`, part of `loss` itself), then build
`total_loss` from `loss` and the classification loss and backpropagate it.
The epoch's `total_train_loss += total_loss` is found (ADL023); the next line,
`tot_loglik_loss += mse_loss`, sums the returned term with its graph on every
batch of the epoch too (it is read once, `.detach()`ed, after the loop), and is
missed: the term is never itself backpropagated, only the loss it is part of.
Re-created in my own shapes: a model whose forward returns its loss and one term
of it, an epoch loop that backpropagates the loss and sums the term.  Nothing
raises; the term's total keeps a graph that reaches back through every batch.
Buggy line: `term_total += term` (not `term.item()`).
Source: https://github.com/edebrouwer/gru_ode_bayes
(experiments/Climate/climate_gruode.py, experiments/MIMIC/mimic_gruode.py)"""
import torch
import torch.nn as nn


class JumpModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 5)
        self.readout = nn.Linear(5, 3)

    def forward(self, xs):
        h = torch.zeros(xs.shape[1], 5)
        fit = 0.0
        for x in xs:
            h = self.cell(x, h)
            fit = fit + ((self.readout(h) - x) ** 2).mean()
        penalty = 1e-3 * h.pow(2).sum()
        return h, fit + penalty, fit


def train(model, batches, epochs=1):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(epochs):
        loss_total = 0
        term_total = 0
        for xs in batches:
            optimizer.zero_grad()
            _, loss, term = model(xs)
            loss_total += loss.item()
            term_total += term  # expect: ADL023
            loss.backward()
            optimizer.step()
    return term_total


def bug_shows():
    """After an epoch, the term's total is a tensor whose graph reaches back
    through every batch's term (one `AddBackward0` per batch)."""
    torch.manual_seed(0)
    model = JumpModel()
    batches = [torch.randn(4, 2, 3) for _ in range(5)]
    total = train(model, batches)
    depth, node = 0, total.grad_fn
    while node is not None and node.name() == "AddBackward0":
        depth += 1
        node = node.next_functions[0][0]
    return total.grad_fn is not None and depth >= 4
