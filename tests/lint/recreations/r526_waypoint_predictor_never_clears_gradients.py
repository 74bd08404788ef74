"""waypoint-predictor trains the waypoint heatmap predictor with
`loss.backward(); optimizer.step()` per batch and no `zero_grad()` anywhere in
the training loop: "I noticed that in your training loop, there doesn't seem
to be a call to `optimizer.zero_grad()`".  Each step applies the sum of every
batch's gradient so far.  Nothing raises.
Buggy line: `optimizer.step()` with no `optimizer.zero_grad()` in the loop.
Source: https://github.com/wz0919/waypoint-predictor/issues/4"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BinaryDistPredictor_TRM(nn.Module):
    def __init__(self, d=8, angles=4, dists=3):
        super().__init__()
        self.visual_fc = nn.Linear(d, 8)
        self.vis_classifier = nn.Linear(8, angles * dists)

    def forward(self, rgb_feats, depth_feats):
        h = torch.tanh(self.visual_fc(rgb_feats + depth_feats))
        return self.vis_classifier(h)


def train_val(args, predictor, train_iter, record=None):
    optimizer = torch.optim.AdamW(predictor.parameters(), lr=args["lr"])
    for epoch in range(args["epochs"]):
        predictor.train()
        for i, (rgb_feats, depth_feats, target) in enumerate(train_iter):
            vis_logits = predictor(rgb_feats, depth_feats)
            loss_vis = F.binary_cross_entropy_with_logits(vis_logits, target)
            total_loss = loss_vis
            if record is not None:
                g = predictor.vis_classifier.weight.grad
                record.append(None if g is None else g.clone())
            total_loss.backward()
            optimizer.step()  # expect: ADL018


def bug_shows():
    """Before the second batch's backward, .grad still holds the first batch's gradient."""
    torch.manual_seed(0)
    data = [(torch.randn(2, 8), torch.randn(2, 8), torch.rand(2, 12)) for _ in range(2)]
    record = []
    train_val({"lr": 1e-3, "epochs": 1}, BinaryDistPredictor_TRM(), data, record=record)
    return record[1] is not None and record[1].abs().sum().item() > 0
