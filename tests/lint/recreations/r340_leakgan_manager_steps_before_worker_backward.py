"""TextBox's `LeakGANTrainer` trains the generator's manager and worker with
one optimizer each.  `_optimize_step` received the model's two losses as a
tuple and, for each optimizer and loss in turn, cleared, backpropagated (with
`retain_graph` for all but the last) and stepped.  The manager's step changes
its weights in place before the worker's loss, whose graph runs through the
manager's goal vectors, is backpropagated ("one of the variables needed for
gradient computation has been modified by an inplace operation").  The fix
(35166fc) backpropagates both losses first and steps the optimizers in a
second loop.
Buggy line: `o.step()` inside the loop over `zip(opt, losses)`.
Expected finding: ADL003 there.
Source: https://github.com/RUCAIBox/TextBox/pull/105"""
import torch
import torch.nn as nn
import torch.optim as optim


class LeakGANGenerator(nn.Module):
    def __init__(self, dim=4, goal_dim=3, vocab=6):
        super().__init__()
        self.manager = nn.Sequential(nn.Linear(dim, goal_dim), nn.Tanh(), nn.Linear(goal_dim, goal_dim))
        self.worker = nn.Linear(dim + goal_dim, vocab)

    def calculate_g_adversarial_loss(self, features, rewards):
        goals = torch.tanh(self.manager(features))
        manager_loss = -(goals.sum(1) * rewards).mean()
        logits = self.worker(torch.cat([features, goals], 1))
        worker_loss = -(torch.log_softmax(logits, 1)[:, 0] * rewards).mean()
        return manager_loss, worker_loss


class LeakGANTrainer:
    def __init__(self, model, lr=1e-2, grad_clip=5.0):
        self.model = model
        self.grad_clip = grad_clip
        self.g_optimizer = (
            optim.Adam(model.manager.parameters(), lr=lr),
            optim.Adam(model.worker.parameters(), lr=lr),
        )

    def _optimize_step(self, losses, total_loss, model, opt):
        loss_tuple = tuple(per_loss.item() for per_loss in losses)
        total_loss = loss_tuple if total_loss is None else tuple(map(sum, zip(total_loss, loss_tuple)))
        for i, (o, loss) in enumerate(zip(opt, losses)):
            o.zero_grad()
            loss.backward(retain_graph=True if i < len(opt) - 1 else False)
            torch.nn.utils.clip_grad_norm_(model.parameters(), self.grad_clip)
            o.step()  # missed: ADL003
        return total_loss

    def _adversarial_train_epoch(self, batches):
        total_loss = None
        for features, rewards in batches:
            losses = self.model.calculate_g_adversarial_loss(features, rewards)
            total_loss = self._optimize_step(losses, total_loss, self.model, self.g_optimizer)
        return total_loss


def run():
    torch.manual_seed(0)
    trainer = LeakGANTrainer(LeakGANGenerator())
    trainer._adversarial_train_epoch([(torch.randn(5, 4), torch.rand(5))])
