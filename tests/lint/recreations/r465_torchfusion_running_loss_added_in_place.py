"""TorchFusion's `StandardBaseGanLearner` trains the discriminator and the
generator in `__disc_train_func__` and `__gen_train_func__`, each ending with
`self.disc_running_loss.add_(loss.cpu() * batch_size)` (and the same for the
generator): the running loss, a tensor held by the learner for the epoch's
report, is added the batch's loss *with its graph*.  From the first batch on
the running loss is part of every batch's graph, which it keeps alive until
the epoch ends.  Nothing raises; memory grows with the batches.  The fix adds
`loss.item() * batch_size` (or `loss.detach()`).
Buggy line: `self.disc_running_loss.add_(loss.cpu() * batch_size)`.
Source: https://github.com/johnolafenwa/TorchFusion/issues/5
(torchfusion/gan/learners/learners.py, the learner the report's traceback runs)"""
import torch
import torch.nn as nn


class StandardGanLearner:
    def __init__(self, gen_model, disc_model, gen_optimizer, disc_optimizer, latent_size=4):
        self.gen_model = gen_model
        self.disc_model = disc_model
        self.gen_optimizer = gen_optimizer
        self.disc_optimizer = disc_optimizer
        self.latent_size = latent_size
        self.loss_fn = nn.BCELoss()
        self.disc_running_loss = torch.tensor(0.0)
        self.gen_running_loss = torch.tensor(0.0)

    def __disc_train_func__(self, x):
        self.disc_optimizer.zero_grad()
        batch_size = x.size(0)
        source = torch.randn(batch_size, self.latent_size)
        outputs = self.disc_model(x)
        gen_outputs = self.disc_model(self.gen_model(source).detach())
        loss = self.loss_fn(outputs, torch.ones(batch_size, 1)) + self.loss_fn(gen_outputs, torch.zeros(batch_size, 1))
        loss.backward()
        self.disc_optimizer.step()
        self.disc_running_loss.add_(loss.cpu() * batch_size)  # expect: ADL023

    def __gen_train_func__(self, x):
        self.gen_optimizer.zero_grad()
        batch_size = x.size(0)
        outputs = self.disc_model(self.gen_model(torch.randn(batch_size, self.latent_size)))
        loss = self.loss_fn(outputs, torch.ones(batch_size, 1))
        loss.backward()
        self.gen_optimizer.step()
        self.gen_running_loss.add_(loss.cpu() * batch_size)  # expect: ADL023

    def __train_loop__(self, train_loader):
        for x in train_loader:
            self.__disc_train_func__(x)
            self.__gen_train_func__(x)


def bug_shows():
    """After an epoch the learner's running losses carry the batches' graphs."""
    torch.manual_seed(0)
    gen = nn.Sequential(nn.Linear(4, 6), nn.Tanh())
    disc = nn.Sequential(nn.Linear(6, 1), nn.Sigmoid())
    learner = StandardGanLearner(gen, disc, torch.optim.Adam(gen.parameters()), torch.optim.Adam(disc.parameters()))
    learner.__train_loop__([torch.randn(4, 6) for _ in range(3)])
    return learner.disc_running_loss.grad_fn is not None and learner.gen_running_loss.grad_fn is not None
