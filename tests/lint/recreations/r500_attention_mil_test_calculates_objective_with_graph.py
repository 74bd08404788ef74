"""AttentionDeepMIL's `main.py` evaluates with `test()`: `model.eval()` and a
loop that calls the model's own `calculate_objective` and
`calculate_classification_error` on every bag, with gradients on.  The pull
request: "Gradient calculation is not required during testing time.
Hence, add `with torch.no_grad()`" (merged).  Nothing raises.
Buggy line: `loss, attention_weights = model.calculate_objective(data, bag_label)` in `test`.
Source: https://github.com/AMLab-Amsterdam/AttentionDeepMIL/pull/24"""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, L=8, D=4, K=1):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Linear(5, L), nn.ReLU())
        self.attention = nn.Sequential(nn.Linear(L, D), nn.Tanh(), nn.Linear(D, K))
        self.classifier = nn.Sequential(nn.Linear(L * K, 1), nn.Sigmoid())

    def forward(self, x):
        H = self.feature_extractor(x.squeeze(0))
        A = torch.softmax(self.attention(H).t(), dim=1)
        M = A @ H
        Y_prob = self.classifier(M)
        Y_hat = torch.ge(Y_prob, 0.5).float()
        return Y_prob, Y_hat, A

    def calculate_classification_error(self, X, Y):
        _, Y_hat, _ = self.forward(X)
        error = 1.0 - Y_hat.eq(Y).float().mean().item()
        return error, Y_hat

    def calculate_objective(self, X, Y):
        Y_prob, _, A = self.forward(X)
        Y_prob = torch.clamp(Y_prob, min=1e-5, max=1.0 - 1e-5)
        neg_log_likelihood = -1.0 * (Y * torch.log(Y_prob) + (1.0 - Y) * torch.log(1.0 - Y_prob))
        return neg_log_likelihood, A


def train(model, optimizer, train_loader):
    model.train()
    train_loss = 0.0
    for data, label in train_loader:
        bag_label = label[0]
        optimizer.zero_grad()
        loss, _ = model.calculate_objective(data, bag_label)
        train_loss += loss.item()
        loss.backward()
        optimizer.step()
    return train_loss / len(train_loader)


def test(model, test_loader, kept=None):
    model.eval()
    test_loss, test_error = 0.0, 0.0
    for batch_idx, (data, label) in enumerate(test_loader):
        bag_label = label[0]
        loss, attention_weights = model.calculate_objective(data, bag_label)  # expect: ADL031
        test_loss += loss.item()
        error, predicted_label = model.calculate_classification_error(data, bag_label)
        test_error += error
        if kept is not None:
            kept.append(attention_weights)
    return test_loss / len(test_loader), test_error / len(test_loader)


def bug_shows():
    """The attention weights of every test bag carry the model's graph."""
    torch.manual_seed(0)
    model = Attention()
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    bags = [(torch.randn(1, 7, 5), torch.tensor([[1.0]])) for _ in range(2)]
    train(model, optimizer, bags)
    kept = []
    test(model, bags, kept)
    return all(a.grad_fn is not None for a in kept)
