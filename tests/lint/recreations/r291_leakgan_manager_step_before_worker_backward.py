"""TextGAN-PyTorch's LeakGAN generator: a manager LSTM turns the
discriminator's leaked features into goals, and the worker's next-token
distribution is a product with `goal2goal(real_goal)`, where `real_goal` is
the manager's learned initial goal at first and then a sum of the manager's
goals.  The generator's parameters are split between two optimizers
(`split_params()`: manager, `mana2goal` and `goal_init`; the rest for the
worker), and `optimize_multi` runs, for each (optimizer, loss) pair,
`opt.zero_grad(); loss.backward(retain_graph=not last); opt.step()`.  The
manager's step changes, in place, `goal_init` and `mana2goal`'s weights, which
the worker loss's graph saved (`goal2goal` keeps its input, a slice of
`goal_init`; the normalised goals keep `mana2goal`'s output), so the worker's
`backward()` raises "modified by an inplace operation" on the first
pre-training batch.  Reported by users (issues 59 and 68); the original
LeakGAN stops the worker's gradient at the goal.
The link the linter lacks: `optimize_multi` receives the optimizers and the
losses as lists from another file, so nothing in it says that the second loss
backpropagates through the first optimizer's parameters.
Source: https://github.com/williamSYSU/TextGAN-PyTorch (instructor/real_data/instructor.py, models/LeakGAN_G.py; issues 59, 68)"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class LeakGANGenerator(nn.Module):
    def __init__(self, vocab_size=12, embed_dim=8, hidden_dim=16, goal_out_size=10, goal_size=4,
                 step_size=2, batch_size=3):
        super().__init__()
        self.vocab_size, self.goal_size, self.step_size = vocab_size, goal_size, step_size
        self.goal_out_size = goal_out_size
        self.embeddings = nn.Embedding(vocab_size, embed_dim)
        self.worker = nn.LSTM(embed_dim, hidden_dim)
        self.manager = nn.LSTM(goal_out_size, hidden_dim)
        self.work2goal = nn.Linear(hidden_dim, vocab_size * goal_size)
        self.mana2goal = nn.Linear(hidden_dim, goal_out_size)
        self.goal2goal = nn.Linear(goal_out_size, goal_size, bias=False)
        self.goal_init = nn.Parameter(torch.rand((batch_size, goal_out_size)))

    def forward(self, inp, work_hidden, mana_hidden, feature, real_goal):
        emb = self.embeddings(inp).unsqueeze(0)
        mana_out, mana_hidden = self.manager(feature, mana_hidden)
        mana_out = self.mana2goal(mana_out.permute([1, 0, 2]))
        cur_goal = F.normalize(mana_out, dim=-1)
        _real_goal = self.goal2goal(real_goal)
        _real_goal = F.normalize(_real_goal, p=2, dim=-1).unsqueeze(-1)
        work_out, work_hidden = self.worker(emb, work_hidden)
        work_out = self.work2goal(work_out).view(-1, self.vocab_size, self.goal_size)
        out = torch.matmul(work_out, _real_goal).squeeze(-1)
        return F.log_softmax(out, dim=-1), cur_goal, work_hidden, mana_hidden

    def pretrain_loss(self, target, features):
        batch_size, seq_len = target.size()
        goal_array = torch.zeros((batch_size, seq_len + 1, self.goal_out_size))
        leak_out_array = torch.zeros((batch_size, seq_len + 1, self.vocab_size))
        hidden = (torch.zeros(1, batch_size, self.worker.hidden_size),) * 2
        work_hidden, mana_hidden = hidden, hidden
        real_goal = self.goal_init[:batch_size, :]
        leak_inp = torch.zeros(batch_size, dtype=torch.long)
        for i in range(seq_len + 1):
            if i > 0:
                leak_inp = target[:, i - 1]
            feature = features[:, i, :].unsqueeze(0)
            out, cur_goal, work_hidden, mana_hidden = self.forward(leak_inp, work_hidden, mana_hidden,
                                                                   feature, real_goal)
            leak_out_array[:, i, :] = out
            goal_array[:, i, :] = cur_goal.squeeze(1)
            if i > 0 and i % self.step_size == 0:
                real_goal = torch.sum(goal_array[:, i - 1:i + 1, :], dim=1)
        # manager: its goals should point where the features move
        moves = features[:, self.step_size:, :] - features[:, :-self.step_size, :]
        goals = goal_array[:, :seq_len + 1 - self.step_size, :]
        manager_loss = -F.cosine_similarity(moves, goals, dim=-1).mean()
        # worker: next-token likelihood
        nll = nn.NLLLoss()(leak_out_array[:, :seq_len, :].permute([0, 2, 1]), target)
        return manager_loss, nll

    def split_params(self):
        mana_params = list(self.manager.parameters()) + list(self.mana2goal.parameters())
        mana_params.append(self.goal_init)
        work_params = list(self.embeddings.parameters()) + list(self.worker.parameters()) + \
            list(self.work2goal.parameters()) + list(self.goal2goal.parameters())
        return mana_params, work_params


def optimize_multi(opts, losses):
    for i, (opt, loss) in enumerate(zip(opts, losses)):
        opt.zero_grad()
        loss.backward(retain_graph=True if i < len(opts) - 1 else False)
        opt.step()  # missed: ADL003


def run():
    torch.manual_seed(0)
    gen = LeakGANGenerator()
    mana_params, work_params = gen.split_params()
    gen_opt = [optim.Adam(mana_params, lr=1e-2), optim.Adam(work_params, lr=1e-2)]
    target = torch.randint(0, 12, (3, 6))
    features = torch.randn(3, 7, 10)  # the discriminator's leaked features, one per prefix
    mana_loss, work_loss = gen.pretrain_loss(target, features)
    optimize_multi(gen_opt, [mana_loss, work_loss])
