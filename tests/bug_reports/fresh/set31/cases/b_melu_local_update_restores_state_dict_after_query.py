"""MeLU (meta-learned user preference estimator for cold-start recommendation) adapts the
estimator to each user with a MAML-style local update: it computes fast weights
`w - local_lr * grad` (`create_graph=True`), copies them into the model with
`self.model.load_state_dict(self.fast_weights)`, predicts the query set with `self.model(...)`,
and then puts the meta weights back with `self.model.load_state_dict(self.keep_weight)` before
the global update's `losses_q.backward()`. A commenter points out that `load_state_dict` cuts
the graph, so the global update is no longer MAML. On current PyTorch the restore also writes
in place into the parameters the query forward saved, and the global update fails with "one of
the variables needed for gradient computation has been modified by an inplace operation". The
fix is a functional forward with the fast weights (`torch.func.functional_call`), which keeps
the meta-gradient through the local update; the parameters are never overwritten.
Source: https://github.com/hoyeoplee/MeLU/issues/9
expect: raises"""
from collections import OrderedDict
from copy import deepcopy

import torch
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)

config = {"num_rate": 6, "num_genre": 25, "num_gender": 2, "num_age": 7, "embedding_dim": 8,
          "first_fc_hidden_dim": 32, "second_fc_hidden_dim": 16, "local_lr": 5e-3, "lr": 5e-4,
          "inner": 1}


class item(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embedding_rate = torch.nn.Embedding(config["num_rate"], config["embedding_dim"])
        self.embedding_genre = torch.nn.Linear(config["num_genre"], config["embedding_dim"], bias=False)

    def forward(self, rate_idx, genre_idx):
        rate_emb = self.embedding_rate(rate_idx)
        genre_emb = self.embedding_genre(genre_idx.float()) / torch.sum(genre_idx.float(), 1).view(-1, 1).clamp(min=1)
        return torch.cat((rate_emb, genre_emb), 1)


class user(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embedding_gender = torch.nn.Embedding(config["num_gender"], config["embedding_dim"])
        self.embedding_age = torch.nn.Embedding(config["num_age"], config["embedding_dim"])

    def forward(self, gender_idx, age_idx):
        return torch.cat((self.embedding_gender(gender_idx), self.embedding_age(age_idx)), 1)


class user_preference_estimator(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.item_emb = item(config)
        self.user_emb = user(config)
        self.fc1 = torch.nn.Linear(config["embedding_dim"] * 4, config["first_fc_hidden_dim"])
        self.fc2 = torch.nn.Linear(config["first_fc_hidden_dim"], config["second_fc_hidden_dim"])
        self.linear_out = torch.nn.Linear(config["second_fc_hidden_dim"], 1)

    def forward(self, x):
        item_emb = self.item_emb(x[:, 0], x[:, 1:26])
        user_emb = self.user_emb(x[:, 26], x[:, 27])
        x = torch.cat((item_emb, user_emb), 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.linear_out(x)


class MeLU(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.model = user_preference_estimator(config)
        self.local_lr = config["local_lr"]
        self.store_parameters()
        self.meta_optim = torch.optim.Adam(self.model.parameters(), lr=config["lr"])
        self.local_update_target_weight_name = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias",
                                                "linear_out.weight", "linear_out.bias"]

    def store_parameters(self):
        self.keep_weight = deepcopy(self.model.state_dict())
        self.weight_name = list(self.keep_weight.keys())
        self.weight_len = len(self.keep_weight)
        self.fast_weights = OrderedDict()

    def forward(self, support_set_x, support_set_y, query_set_x, num_local_update):
        for idx in range(num_local_update):
            if idx > 0:
                self.model.load_state_dict(self.fast_weights)
            weight_for_local_update = list(self.model.state_dict().values())
            support_set_y_pred = self.model(support_set_x)
            loss = F.mse_loss(support_set_y_pred, support_set_y.view(-1, 1))
            self.model.zero_grad()
            grad = torch.autograd.grad(loss, self.model.parameters(), create_graph=True)
            # local update
            for i in range(self.weight_len):
                if self.weight_name[i] in self.local_update_target_weight_name:
                    self.fast_weights[self.weight_name[i]] = weight_for_local_update[i] - self.local_lr * grad[i]
                else:
                    self.fast_weights[self.weight_name[i]] = weight_for_local_update[i]
        self.model.load_state_dict(self.fast_weights)
        query_set_y_pred = self.model(query_set_x)
        self.model.load_state_dict(self.keep_weight)
        return query_set_y_pred

    def global_update(self, support_set_xs, support_set_ys, query_set_xs, query_set_ys, num_local_update):
        batch_sz = len(support_set_xs)
        losses_q = []
        for i in range(batch_sz):
            query_set_y_pred = self.forward(support_set_xs[i], support_set_ys[i], query_set_xs[i], num_local_update)
            loss_q = F.mse_loss(query_set_y_pred, query_set_ys[i].view(-1, 1))
            losses_q.append(loss_q)
        losses_q = torch.stack(losses_q).mean(0)
        self.meta_optim.zero_grad()
        losses_q.backward()
        self.meta_optim.step()
        self.store_parameters()
        return losses_q.detach()


def make_user_set(n):
    rate = torch.randint(0, config["num_rate"], (n, 1))
    genre = (torch.rand(n, 25) < 0.2).long()
    gender = torch.randint(0, config["num_gender"], (n, 1))
    age = torch.randint(0, config["num_age"], (n, 1))
    x = torch.cat((rate, genre, gender, age), 1)
    y = torch.randint(1, 6, (n,)).float()
    return x, y


melu = MeLU(config)
losses = []
for epoch in range(3):
    tasks = [make_user_set(10) for _ in range(4)]
    support_xs = [t[0][:6] for t in tasks]
    support_ys = [t[1][:6] for t in tasks]
    query_xs = [t[0][6:] for t in tasks]
    query_ys = [t[1][6:] for t in tasks]
    losses.append(melu.global_update(support_xs, support_ys, query_xs, query_ys, config["inner"]))

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in melu.model.parameters()]}
