"""xvr (X-ray to volume registration), `src/xvr/model/trainer.py` before pull request 45 ("Fix
gradient accumulation in the trainer"): `Trainer._run_iteration` divides the loss by
`n_grad_accum_itrs` for gradient accumulation, but clears the gradients on every iteration
(`self.optimizer.zero_grad()` right before `loss.mean().backward()`) and clips them after every
backward, while `optimizer.step()` runs only every `n_grad_accum_itrs` iterations.  Each step
applies the last micro-batch's gradient alone, divided by the accumulation count: the other
micro-batches are computed and thrown away.  The fix moves the clip, the step and the clear
into the window's `if`.
Re-created in my own words with the trainer's structure: `initialize_modules` building the pose
regressor, a differentiable renderer, the optimizer and a warm-up scheduler, the pose sampler,
`_render_samples` under `no_grad`, the pose-regression loss, an adaptive gradient clip helper
(the repository imports timm's), `_run_iteration`, `step` and `train`.
Nothing raises: `bug_shows()` shows the weights after one accumulation window differing from
those of the window the fix computes (all micro-batches accumulated, clipped once, one step).
Buggy line: `self.optimizer.zero_grad()` inside the accumulation window.
Source: https://github.com/eigenvivek/xvr/blob/cc13adcb1cf53308c08e110a95bbab0cd000d99b/src/xvr/model/trainer.py"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def adaptive_clip_grad_(parameters, clip_factor=0.01, eps=1e-3):
    for p in parameters:
        if p.grad is None:
            continue
        p_norm = p.detach().norm().clamp(min=eps)
        g_norm = p.grad.detach().norm()
        max_norm = p_norm * clip_factor
        if g_norm > max_norm:
            p.grad.detach().mul_(max_norm / (g_norm + 1e-6))


class PoseRegressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                      nn.Flatten())
        self.head = nn.Linear(8, 6)

    def forward(self, img):
        return self.head(self.backbone(img))


class Renderer(nn.Module):
    def __init__(self, height):
        super().__init__()
        self.height = height
        self.register_buffer("projection", torch.randn(6, height * height) * 0.1)

    def forward(self, pose):
        return torch.sigmoid(pose @ self.projection).view(-1, 1, self.height, self.height)


def render(drr, pose):
    img = drr(pose)
    mask = (img > 0.5).float()
    return img, mask


class PoseRegressionLoss(nn.Module):
    def __init__(self, weight_geo):
        super().__init__()
        self.weight_geo = weight_geo

    def forward(self, img, pose, pred_img, pred_pose):
        mncc = 1 - F.cosine_similarity(img.flatten(1), pred_img.flatten(1))
        dgeo = (pose - pred_pose).pow(2).sum(dim=1)
        return mncc + self.weight_geo * dgeo, mncc, dgeo


def get_random_pose(batch_size, generator):
    return torch.randn(batch_size, 6, generator=generator)


def initialize_modules(height, lr, n_warmup_itrs):
    model = PoseRegressor()
    drr = Renderer(height)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda itr: min(1.0, (itr + 1) / n_warmup_itrs))
    return model, drr, optimizer, scheduler


class Trainer:
    def __init__(self, height=8, lr=5e-3, weight_geo=1e-2, batch_size=4, n_total_itrs=4, n_warmup_itrs=2,
                 n_grad_accum_itrs=4):
        self.model, self.drr, self.optimizer, self.scheduler = initialize_modules(height, lr, n_warmup_itrs)
        self.lossfn = PoseRegressionLoss(weight_geo)
        self.batch_size = batch_size
        self.n_total_itrs = n_total_itrs
        self.n_grad_accum_itrs = n_grad_accum_itrs
        self.generator = torch.Generator().manual_seed(3)

    def train(self):
        for itr in range(self.n_total_itrs):
            log = self.step(itr)
        return log

    def step(self, itr):
        return self._run_iteration(itr)

    def _render_samples(self):
        pose = get_random_pose(self.batch_size, self.generator)
        with torch.no_grad():
            img, mask = render(self.drr, pose)
        return img, mask, pose

    def _run_iteration(self, itr):
        img, mask, pose = self._render_samples()

        pred_pose = self.model(img)
        pred_img, pred_mask = render(self.drr, pred_pose)

        loss, mncc, dgeo = self.lossfn(img, pose, pred_img, pred_pose)
        loss = loss / self.n_grad_accum_itrs

        # Optimize the model
        self.optimizer.zero_grad()  # missed: ADL029 (no rule: the window clears on every call, not only inside its if)
        loss.mean().backward()
        adaptive_clip_grad_(self.model.parameters())
        if ((itr + 1) % self.n_grad_accum_itrs == 0) or ((itr + 1) == self.n_total_itrs):
            self.optimizer.step()
            self.scheduler.step()

        return {"mncc": mncc.mean().item(), "dgeo": dgeo.mean().item(), "loss": loss.mean().item()}


def run():
    torch.manual_seed(0)
    trainer = Trainer()
    trainer.train()
    return trainer


def bug_shows():
    torch.manual_seed(0)
    as_written = Trainer()
    accumulated = copy.deepcopy(as_written)
    as_written.train()
    # the fixed window: accumulate every micro-batch, clip once, step once, then clear
    for itr in range(accumulated.n_total_itrs):
        img, mask, pose = accumulated._render_samples()
        pred_pose = accumulated.model(img)
        pred_img, _ = render(accumulated.drr, pred_pose)
        loss, _, _ = accumulated.lossfn(img, pose, pred_img, pred_pose)
        (loss / accumulated.n_grad_accum_itrs).mean().backward()
    adaptive_clip_grad_(accumulated.model.parameters())
    accumulated.optimizer.step()
    accumulated.optimizer.zero_grad()
    return any(not torch.allclose(a, b) for a, b in zip(as_written.model.parameters(), accumulated.model.parameters()))
