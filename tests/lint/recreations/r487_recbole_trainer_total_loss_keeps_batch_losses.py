"""RecBole's `Trainer._train_epoch` returns the epoch's total loss for
logging.  When the model's `calculate_loss` returns several losses it sums
their `.item()`s, but for a single loss it keeps the tensor:
`total_loss = losses if total_loss is None else total_loss + losses`, so each
batch's loss joins the total with its graph and the epoch's graphs stay in
memory until the epoch ends ("storing loss in each batch cause out of
memory").  The pull request sums `losses.item()`.
Buggy line: `total_loss = losses if total_loss is None else total_loss + losses`.
Source: https://github.com/RUCAIBox/RecBole/pull/307"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BPR(nn.Module):
    def __init__(self, n_users=5, n_items=7, dim=4):
        super().__init__()
        self.user_embedding = nn.Embedding(n_users, dim)
        self.item_embedding = nn.Embedding(n_items, dim)

    def calculate_loss(self, interaction):
        user, pos, neg = interaction
        u = self.user_embedding(user)
        pos_score = (u * self.item_embedding(pos)).sum(-1)
        neg_score = (u * self.item_embedding(neg)).sum(-1)
        return -F.logsigmoid(pos_score - neg_score).mean()


class Trainer:
    def __init__(self, model, learning_rate=0.01):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    def _train_epoch(self, train_data, epoch_idx, loss_func=None):
        self.model.train()
        loss_func = loss_func or self.model.calculate_loss
        total_loss = None
        for batch_idx, interaction in enumerate(train_data):
            self.optimizer.zero_grad()
            losses = loss_func(interaction)
            if isinstance(losses, tuple):
                loss = sum(losses)
                loss_tuple = tuple(per_loss.item() for per_loss in losses)
                total_loss = loss_tuple if total_loss is None else tuple(map(sum, zip(total_loss, loss_tuple)))
            else:
                loss = losses
                total_loss = losses if total_loss is None else total_loss + losses  # expect: ADL023
            loss.backward()
            self.optimizer.step()
        return total_loss


def bug_shows():
    """The epoch's total loss holds the batches' graphs."""
    torch.manual_seed(0)
    data = [(torch.randint(0, 5, (4,)), torch.randint(0, 7, (4,)), torch.randint(0, 7, (4,))) for _ in range(3)]
    total = Trainer(BPR())._train_epoch(data, 0)
    return total.grad_fn is not None
