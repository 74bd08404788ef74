"""A Replicate `cog` model whose prediction itself needs training: `predict()` fits a small
per-request adapter (test-time optimisation of a few steps on the request's own examples) on top
of a frozen backbone loaded in `setup()`, then returns predictions from the adapted model. The
user decorated `predict` with `@torch.inference_mode()`, as serving code usually is, so inside
it nothing is recorded: `loss.backward()` fails with "element 0 of tensors does not require grad
and does not have a grad_fn" (and forcing `loss.requires_grad_(True)` only silenced it: the grads
stayed None and the weights never moved). The reporter's fix: "I overlooked the
`torch.inference_mode()` decorator over the predict function. Removing that fixed the issue."
Source: https://github.com/replicate/cog/issues/1681
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BasePredictor:
    def setup(self):
        pass


class Predictor(BasePredictor):
    def setup(self):
        """Load the frozen backbone once per container."""
        self.backbone = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.backbone.requires_grad_(False)
        self.backbone.eval()

    def predict(self, support_x: torch.Tensor, support_y: torch.Tensor, query_x: torch.Tensor,
                steps: int = 30, lr: float = 0.05) -> dict:
        """Fit a linear head on the request's labelled examples, then label the queries."""
        head = nn.Linear(16, int(support_y.max()) + 1)
        optimizer = torch.optim.SGD(head.parameters(), lr=lr, momentum=0.9)
        losses = []
        for step in range(steps):
            optimizer.zero_grad()
            features = self.backbone(support_x)
            loss = F.cross_entropy(head(features), support_y)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach().clone())
        probs = torch.softmax(head(self.backbone(query_x)), dim=-1)
        return {"losses": torch.stack(losses), "probs": probs.detach().clone(),
                "head": [p.detach().clone() for p in head.parameters()]}


predictor = Predictor()
predictor.setup()
support_x = torch.randn(24, 8)
support_y = (support_x[:, 0] + support_x[:, 1] > 0).long() + (support_x[:, 2] > 1).long()
query_x = torch.randn(6, 8)
result = predictor.predict(support_x, support_y, query_x)
