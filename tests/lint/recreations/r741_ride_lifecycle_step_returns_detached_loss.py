"""ride (training-loop mixins on PyTorch Lightning), `ride/lifecycle.py` before commit f571e7c
("Removed loss detach in step"): `Lifecycle.common_step` collects the step's metrics (the loss
among them) and returns `detach_to_cpu({"loss": metrics[loss_key], **metrics, "pred": pred,
"target": target})`.  `training_step` hands that dict to the trainer, which backpropagates
`out["loss"]` -- a tensor already detached from the model, so the backward raises "element 0 of
tensors does not require grad and does not have a grad_fn" (the fix detaches every entry but the
loss).
Re-created in my own words with the mixin's structure: `MetricMixin.collect_metrics` over the
metrics of the class hierarchy, `prefix_keys`, the recursive `detach_to_cpu` helper, the
`Lifecycle` mixin with `metrics_step`/`common_step`/`training_step`, a model class mixing it in,
and a small trainer loop standing in for Lightning's (`training_step`, then backward and step).
Raises at the trainer's `loss.backward()`; buggy line: `return detach_to_cpu({...})` in
`common_step`.
Source: https://github.com/LukasHedegaard/ride/blob/7fde0a4696e1cf0abb3ac5b3ed780304a4533255/ride/lifecycle.py"""
from types import SimpleNamespace
from typing import Any, Dict, Sequence, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def prefix_keys(prefix, metrics):
    return {f"{prefix}{k}": v for k, v in metrics.items()}


def detach_to_cpu(x: Union[Tensor, Sequence[Tensor], Dict[Any, Tensor]]):
    if isinstance(x, Tensor):
        return x.detach().cpu()
    if isinstance(x, dict):
        return {k: detach_to_cpu(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(detach_to_cpu(v) for v in x)
    return x


class MetricMixin:
    def collect_metrics(self, preds, targets):
        mdlist = [c.metrics_step(self, preds, targets) for c in type(self).__mro__ if "metrics_step" in c.__dict__]
        return {k: v for md in mdlist for k, v in md.items()}


class Lifecycle(MetricMixin):
    def __init__(self, hparams):
        self.hparams = hparams
        self.loss = getattr(F, hparams.loss)

    def metrics_step(self, preds, targets, **kwargs):
        return {"loss": self.loss(preds, targets)}

    def common_step(self, pred, target, prefix="train/", log=False):
        loss_key = prefix + "loss"
        metrics = prefix_keys(prefix, self.collect_metrics(pred, target))
        return detach_to_cpu(  # missed: ADL034 (no rule: a loss detached by a helper, returned in a dict to the trainer)
            {
                "loss": metrics[loss_key],
                **metrics,
                "pred": pred,
                "target": target,
            }
        )

    def training_step(self, batch, batch_idx=None):
        x, target = batch
        pred = self.forward(x)
        return self.common_step(pred, target, prefix="train/", log=True)


class MyRideModule(nn.Module, Lifecycle):
    def __init__(self, hparams):
        nn.Module.__init__(self)
        Lifecycle.__init__(self, hparams)
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        return self.lin(x)


class MiniTrainer:
    def fit(self, module, dataloader, epochs=1):
        optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        for _ in range(epochs):
            for batch_idx, batch in enumerate(dataloader):
                out = module.training_step(batch, batch_idx)
                loss = out["loss"]
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


def run():
    torch.manual_seed(0)
    module = MyRideModule(SimpleNamespace(loss="cross_entropy", optimization_metric="loss"))
    data = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(2)]
    MiniTrainer().fit(module, data)
