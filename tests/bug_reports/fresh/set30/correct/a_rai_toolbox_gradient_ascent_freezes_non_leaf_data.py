"""rAI-toolbox's `gradient_ascent` solves for an additive perturbation by projected gradient
ascent; for the duration of the solve it "freezes" the model, the data and the target with
`frozen(...)`, which records each tensor's `requires_grad` and calls `requires_grad_(False)`. Called
on data that is itself the output of a differentiable computation (here: features from an encoder
that is being trained, attacked in feature space), the freeze fails with "you can only change
requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that
doesn't require differentiation use var_no_grad = var.detach()". The fix (PR 27, closing issue 24):
`gradient_ascent` detaches non-leaf data and targets before freezing them.
Source: https://github.com/mit-ll-responsible-ai/responsible-ai-toolbox/issues/24
(fix: https://github.com/mit-ll-responsible-ai/responsible-ai-toolbox/pull/27)
expect: raises"""
import torch as tr
import torch.nn as nn
import torch.nn.functional as F

tr.manual_seed(0)


def flatten_params(items):
    for item in items:
        if isinstance(item, tr.Tensor):
            yield item
        else:
            yield from flatten_params(item)


class frozen:
    """Sets `requires_grad=False` on the given tensors / modules' parameters inside the context."""

    def __init__(self, *items):
        self.items = items

    def __enter__(self):
        self.states = {}
        for item in self.items:
            params = item.parameters() if isinstance(item, nn.Module) else [item]
            for param in flatten_params(params):
                if param not in self.states:
                    self.states[param] = param.requires_grad
                    param.requires_grad_(False)

    def __exit__(self, *exc):
        for param, requires_grad in self.states.items():
            param.requires_grad_(requires_grad)


class AdditivePerturbation(nn.Module):
    def __init__(self, data):
        super().__init__()
        self.delta = nn.Parameter(tr.zeros_like(data))

    def forward(self, data):
        return data + self.delta


def gradient_ascent(model, data, target, epsilon=0.5, step_size=0.1, steps=5):
    data = tr.as_tensor(data)
    target = tr.as_tensor(target)

    if not data.is_leaf:
        data = data.detach()

    if not target.is_leaf:
        target = target.detach()

    pmodel = AdditivePerturbation(data)
    optim = tr.optim.SGD(pmodel.parameters(), lr=step_size)
    with frozen(data, target, model), tr.enable_grad():
        for _ in range(steps):
            xadv = pmodel(data)
            loss = -F.cross_entropy(model(xadv), target)
            optim.zero_grad(set_to_none=True)
            loss.backward()
            pmodel.delta.grad = pmodel.delta.grad.sign()
            optim.step()
            with tr.no_grad():
                pmodel.delta.clamp_(-epsilon, epsilon)
    return pmodel(data).detach(), loss.detach()


encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
classifier = nn.Linear(16, 3)
optimizer = tr.optim.SGD(list(encoder.parameters()) + list(classifier.parameters()), lr=0.1)
train_losses, attack_losses = [], []
for step in range(3):
    x = tr.randn(12, 10)
    y = tr.randint(0, 3, (12,))
    feats = encoder(x)
    adv_feats, attack_loss = gradient_ascent(classifier, feats, y)
    loss = F.cross_entropy(classifier(feats), y) + F.cross_entropy(classifier(adv_feats), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    train_losses.append(loss.detach())
    attack_losses.append(attack_loss)
result = {"train_losses": tr.stack(train_losses), "attack_losses": tr.stack(attack_losses),
          "params": [p.detach().clone() for p in list(encoder.parameters()) + list(classifier.parameters())]}
