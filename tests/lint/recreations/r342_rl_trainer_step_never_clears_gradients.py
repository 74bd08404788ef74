"""torchforge's RL trainer ran `train_step` once per batch of episodes:
forward, `loss.backward()`, `self.optimizer.step()`, and nothing cleared the
gradients, so every step applied the sum of all earlier batches' gradients
("a dumb bug where we weren't zeroing grad on optimizers after each step").
Nothing raises.  The fix calls `zero_grad()` after each step.
Buggy line: `self.optimizer.step()` in `RLTrainer.train_step`, with no
`zero_grad()` in the trainer.
Expected finding: ADL018 (no `zero_grad()` in a training loop) at the loop
that calls the step, or at the step.
Source: https://github.com/meta-pytorch/torchforge/pull/71"""
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 3)

    def forward(self, obs):
        return torch.log_softmax(self.head(obs), dim=-1)


class RLTrainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.step_count = 0

    def loss_fn(self, logprobs, actions, advantages):
        chosen = logprobs.gather(1, actions.unsqueeze(1)).squeeze(1)
        return -(chosen * advantages).mean()

    def train_step(self, batch):
        obs, actions, advantages = batch
        logprobs = self.model(obs)
        loss = self.loss_fn(logprobs, actions, advantages)
        loss.backward()
        self.optimizer.step()  # expect: ADL018
        self.step_count += 1
        return loss.item()


def train(trainer, batches):
    for batch in batches:
        trainer.train_step(batch)


def bug_shows():
    """The second step applies the first batch's gradient again: the update
    is not the learning rate times the second batch's own gradient."""
    torch.manual_seed(0)
    batches = [(torch.randn(2, 4), torch.tensor([0, 2]), torch.randn(2)) for _ in range(2)]
    trainer = RLTrainer(Policy(), lr=0.1)
    train(trainer, batches[:1])
    weight = trainer.model.head.weight
    before = weight.detach().clone()
    obs, actions, advantages = batches[1]
    own = torch.autograd.grad(trainer.loss_fn(trainer.model(obs), actions, advantages), weight)[0]
    train(trainer, batches[1:])
    applied = (before - weight.detach()) / 0.1
    return not torch.allclose(applied, own, atol=1e-6)
