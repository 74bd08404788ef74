"""labelmodels' `LabelModel._do_estimate` summed each batch's loss into the
epoch's running loss as a tensor: `running_loss += loss`.  The sum keeps the
graph of every batch of the epoch alive (the reporter's GPU ran out of memory
on a large training set; the process just exited).  Nothing raises on a small
one.  The fix adds `loss.item()`.
Buggy line: `running_loss += loss` in `_do_estimate`.
Expected finding: ADL023 there (a loss summed across the loop with its
graph).
Source: https://github.com/BatsResearch/labelmodels/issues/4"""
import torch
import torch.nn as nn


class NaiveBayes(nn.Module):
    def __init__(self, num_classes=2, num_lfs=3):
        super().__init__()
        self.class_balance = nn.Parameter(torch.zeros(num_classes))
        self.accuracy = nn.Parameter(torch.full((num_lfs, num_classes), 0.7))

    def forward(self, votes):
        prior = torch.log_softmax(self.class_balance, 0)
        agree = torch.log(torch.sigmoid(self.accuracy))
        disagree = torch.log(1 - torch.sigmoid(self.accuracy))
        ll = prior + (votes[:, :, None] * agree).sum(1) + ((1 - votes[:, :, None]) * disagree).sum(1)
        return torch.logsumexp(ll, 1)

    def _get_regularization_loss(self):
        return 0.01 * self.accuracy.pow(2).sum()

    def _do_estimate(self, batches, epochs=2, lr=0.05):
        optimizer = torch.optim.SGD(self.parameters(), lr=lr)
        epoch_losses = []
        for _ in range(epochs):
            running_loss = 0.0
            for votes in batches:
                optimizer.zero_grad()
                log_likelihood = self(votes)
                loss = -1 * torch.mean(log_likelihood)
                loss += self._get_regularization_loss()
                loss.backward()
                optimizer.step()
                running_loss += loss  # expect: ADL023
            epoch_losses.append(running_loss / len(batches))
        return epoch_losses


def bug_shows():
    """The epoch loss the model reports still holds the batches' graphs."""
    torch.manual_seed(0)
    batches = [torch.randint(0, 2, (4, 3)).float() for _ in range(3)]
    losses = NaiveBayes()._do_estimate(batches)
    return isinstance(losses[-1], torch.Tensor) and losses[-1].grad_fn is not None
