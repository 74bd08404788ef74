"""SSA-SC (after LMSCNet) computes a dictionary of losses per batch,
backpropagates `loss["total"]` and steps, then adds every entry to the
epoch's totals, `epoch_loss[key] += loss[key]`, and the validation loop does
the same.  The totals keep every batch's graph, so GPU memory rises
continuously; nothing raises.  The fix adds `loss[key].item()`.
Buggy line: `epoch_loss[key] += loss[key]` in `train_one_epoch`.
Source: https://github.com/jokester-zzz/SSA-SC/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SSC(nn.Module):
    def __init__(self):
        super().__init__()
        self.seg = nn.Linear(6, 3)
        self.completion = nn.Linear(6, 2)

    def forward(self, voxels):
        return {"seg": self.seg(voxels), "ssc": self.completion(voxels)}

    def compute_loss(self, scores, data):
        seg = F.cross_entropy(scores["seg"], data["seg_label"])
        ssc = F.cross_entropy(scores["ssc"], data["ssc_label"])
        return {"total": seg + ssc, "semantic": seg, "completion": ssc}


def train_one_epoch(model, optimizer, dataset):
    epoch_loss = {"total": 0, "semantic": 0, "completion": 0}
    for data in dataset:
        scores = model(data["voxels"])
        loss = model.compute_loss(scores, data)
        optimizer.zero_grad()
        loss["total"].backward()
        optimizer.step()
        for key in loss:
            epoch_loss[key] += loss[key]  # expect: ADL023
    return epoch_loss


def bug_shows():
    """The epoch's totals still hold the batches' graphs."""
    torch.manual_seed(0)
    model = SSC()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    dataset = [{"voxels": torch.randn(4, 6), "seg_label": torch.randint(0, 3, (4,)),
                "ssc_label": torch.randint(0, 2, (4,))} for _ in range(3)]
    totals = train_one_epoch(model, optimizer, dataset)
    return all(v.grad_fn is not None for v in totals.values())
