"""Explicit-rating matrix factorization with user and item biases (an "SVD with biases"
recommender), trained with an MSE loss plus an L2 penalty on the embeddings of the users and items
in the batch. The penalty helper starts from `torch.tensor(0., requires_grad=True)` and adds
`param.data.norm(dim=1).pow(2).sum() * regularization` for each embedding: `.data` is cut from the
graph, so the penalty adds a number to the loss but no gradient, and the embeddings are never
regularized. Nothing fails; the trained factors are those of the unregularized model. The change:
take the norm of the parameter rows themselves (`param.norm(dim=1)`), so the penalty is
differentiated.
Source: https://github.com/bohyunshin/recommender/blob/1015796ea342d4d3a59c49fae8a3f82e91507274/recommender/loss/custom.py (repository hazard, calculate_penalty)
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SVDWithBias(nn.Module):
    def __init__(self, num_users, num_items, num_factors):
        super().__init__()
        self.embed_user = nn.Embedding(num_users, num_factors)
        self.embed_item = nn.Embedding(num_items, num_factors)
        self.bias_user = nn.Embedding(num_users, 1)
        self.bias_item = nn.Embedding(num_items, 1)
        nn.init.xavier_normal_(self.embed_user.weight)
        nn.init.xavier_normal_(self.embed_item.weight)
        nn.init.zeros_(self.bias_user.weight)
        nn.init.zeros_(self.bias_item.weight)
        self.mu = 3.5

    def forward(self, user_idx, item_idx):
        dot = (self.embed_user(user_idx) * self.embed_item(item_idx)).sum(dim=1)
        return self.mu + dot + self.bias_user(user_idx).squeeze(1) + self.bias_item(item_idx).squeeze(1)


def calculate_penalty(params, regularization, user_idx, item_idx, num_users, num_items):
    penalty = torch.tensor(0., requires_grad=True)
    for param in params:
        if param.shape[0] == num_users:
            param = param[user_idx]
        elif param.shape[0] == num_items:
            param = param[item_idx]
        else:
            continue
        penalty = penalty + param.norm(dim=1).pow(2).sum() * regularization
    return penalty


def svd_loss(pred, true, params, regularization, user_idx, item_idx, num_users, num_items):
    true = true.squeeze()
    mse = F.mse_loss(pred, true, reduction="mean")
    penalty = calculate_penalty(params=params, regularization=regularization, user_idx=user_idx,
                                item_idx=item_idx, num_users=num_users, num_items=num_items)
    return mse + penalty


num_users, num_items = 12, 9
model = SVDWithBias(num_users, num_items, num_factors=4)
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
users = torch.randint(0, num_users, (80,))
items = torch.randint(0, num_items, (80,))
ratings = torch.randint(1, 6, (80,)).float()

losses = []
for epoch in range(5):
    for start in range(0, 80, 16):
        user_idx, item_idx = users[start:start + 16], items[start:start + 16]
        pred = model(user_idx, item_idx)
        loss = svd_loss(pred, ratings[start:start + 16], list(model.parameters()), 0.1,
                        user_idx, item_idx, num_users, num_items)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

result = {name: p.detach().clone() for name, p in model.named_parameters()}
result["losses"] = torch.tensor(losses)
