"""Evaluating a certifiably-robust classifier: after training, the evaluation function walks the
test set, computes the certified (interval-bound) robust error of each batch and, to compare,
the error under a PGD attack. The user uncommented the PGD line of the evaluation function. That
function turns gradients off for the whole evaluation (`torch.set_grad_enabled(False)`) because
the certified bounds need none, so inside the attack `loss.backward()` on the adversarial loss
raises "element 0 of tensors does not require grad and does not have a grad_fn". The answer:
gradients are disabled in the evaluation; re-enable them for the attack (`torch.enable_grad()`).
Source: https://github.com/locuslab/convex_adversarial/issues/34 ("PGD attack error"; answer:
"gradients are disabled. You'll need to re-enable gradients before running the PGD attack (i.e.
using `torch.enable_grad()` ...)")
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def _pgd(model, X, y, epsilon, niters=10, alpha=0.05):
    out = model(X)
    err = (out.max(1)[1] != y).float().sum() / X.size(0)
    X_pgd = X.clone().requires_grad_(True)
    for _ in range(niters):
        loss = F.cross_entropy(model(X_pgd), y)
        loss.backward()
        eta = alpha * X_pgd.grad.sign()
        X_pgd = (X_pgd.detach() + eta)
        X_pgd = (X + torch.clamp(X_pgd - X, -epsilon, epsilon)).requires_grad_(True)
    adv_out = model(X_pgd)
    err_pgd = (adv_out.max(1)[1] != y).float().sum() / X.size(0)
    return err, err_pgd, F.cross_entropy(adv_out, y).detach()


def interval_bounds(model, X, epsilon):
    """Interval bound propagation through Linear/ReLU layers: worst-case logits in the ball."""
    lower, upper = X - epsilon, X + epsilon
    for layer in model:
        if isinstance(layer, nn.Linear):
            center, radius = (upper + lower) / 2, (upper - lower) / 2
            center = layer(center)
            radius = radius @ layer.weight.abs().t()
            lower, upper = center - radius, center + radius
        else:
            lower, upper = layer(lower), layer(upper)
    return lower, upper


def robust_loss(model, epsilon, X, y):
    lower, upper = interval_bounds(model, X, epsilon)
    onehot = F.one_hot(y, upper.size(1)).bool()
    worst = torch.where(onehot, lower, upper)
    return F.cross_entropy(worst, y), (worst.max(1)[1] != y).float().mean()


def evaluate_robust(loader, model, epsilon):
    torch.set_grad_enabled(False)
    model.eval()
    robust_errs, pgd_errs, adv_losses = [], [], []
    for X, y in loader:
        robust_ce, robust_err = robust_loss(model, epsilon, X, y)
        _, pgd_err, adv_loss = _pgd(model, X, y, epsilon)
        robust_errs.append(robust_err)
        pgd_errs.append(pgd_err)
        adv_losses.append(adv_loss)
    torch.set_grad_enabled(True)
    return torch.stack(robust_errs), torch.stack(pgd_errs), torch.stack(adv_losses)


def make_data(n=128):
    X = torch.randn(n, 2)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).long()
    return X, y


model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 2))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
X_train, y_train = make_data()
for epoch in range(30):
    loss = F.cross_entropy(model(X_train), y_train)
    opt.zero_grad()
    loss.backward()
    opt.step()

X_test, y_test = make_data(64)
test_loader = [(X_test[i:i + 32], y_test[i:i + 32]) for i in range(0, 64, 32)]
robust_errs, pgd_errs, adv_losses = evaluate_robust(test_loader, model, epsilon=0.1)

result = {"robust_err": robust_errs, "pgd_err": pgd_errs, "adv_loss": adv_losses,
          "params": [p.detach().clone() for p in model.parameters()]}
print("pgd error", pgd_errs.tolist())
