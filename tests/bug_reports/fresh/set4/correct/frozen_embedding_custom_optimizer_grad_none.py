"""Text classifier with a frozen pretrained embedding, trained with a custom optimizer (a
Frank-Wolfe style step size computed from the loss) that reads `param.grad.data` for every
parameter; the frozen embedding's `.grad` is None.
Source: https://github.com/oval-group/dfw/pull/5 ("AttributeError: 'NoneType' object has no attribute
'data'" in `step` with a frozen embedding layer; fix: skip the parameters that have no gradient,
as PyTorch's own optimizers do).
expect: raises"""
import torch
import torch.nn as nn


class DFW(torch.optim.Optimizer):
    def __init__(self, params, eta=0.5, eps=1e-5):
        super().__init__(params, dict(eta=eta))
        self.eps = eps

    @torch.no_grad()
    def step(self, closure):
        loss = float(closure())
        w_dict = {}
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                w_dict[param] = {"delta_t": param.grad.data, "r_t": -group["eta"] * param.grad.data}
        deltas = [w["delta_t"] for w in w_dict.values()]
        squared_norm = sum(float((d * d).sum()) for d in deltas)
        gamma = min(1.0, loss / (self.param_groups[0]["eta"] * squared_norm + self.eps))
        for param, w in w_dict.items():
            param.add_(gamma * w["r_t"])
        return loss


torch.manual_seed(0)
embedding = nn.Embedding(20, 6)
embedding.weight.requires_grad = False
classifier = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
model = nn.ModuleDict({"embedding": embedding, "classifier": classifier})
optimizer = DFW(model.parameters())
tokens, labels = torch.randint(0, 20, (5, 7)), torch.tensor([0, 1, 1, 0, 1])

losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = nn.functional.multi_margin_loss(classifier(embedding(tokens).mean(1)), labels)
    loss.backward()
    losses.append(optimizer.step(lambda: float(loss)))
result = {"losses": torch.tensor(losses), "params": [p.detach() for p in model.parameters()]}
