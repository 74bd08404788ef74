"""EveryDream2trainer's optimizer wrapper backpropagates the scaled loss
(`scaler.scale(loss).backward()`) and then applies `--clip_grad_norm` to the
unet's gradients before `scaler.step(optimizer)`, without
`scaler.unscale_(optimizer)` first: "if you're using AMP clip_grad_scale is
applied to the scaled gradients. this means that you have to pass values
like 1e5 or 1e6 ... rather than the common/expected 1.0 ... (instead of
effectively halting training)".  Clipping the gradients scaled by 65536 to
norm 1 leaves, after the optimizer unscales them, a gradient of norm
1/65536.  Nothing raises.
Buggy line: `torch.nn.utils.clip_grad_norm_(...)` on the still-scaled gradients in `EveryDreamOptimizer.step`.
Source: https://github.com/victorchall/EveryDream2trainer/pull/175"""
import torch
import torch.nn as nn


class EveryDreamOptimizer:
    def __init__(self, args, unet, text_encoder):
        self.unet_params = list(unet.parameters())
        self.text_encoder_params = list(text_encoder.parameters())
        self.optimizers = [torch.optim.SGD(self.unet_params, lr=args["lr"]),
                           torch.optim.SGD(self.text_encoder_params, lr=args["lr"])]
        self.clip_grad_norm = args.get("clip_grad_norm")
        self.grad_accum = args.get("grad_accum", 1)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=2 ** 16)
        self.applied_grad_norms = []

    def step(self, loss, step, global_step):
        self.scaler.scale(loss).backward()
        if self.clip_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(parameters=self.unet_params, max_norm=self.clip_grad_norm)  # missed: no rule (clip of the scaled gradients, before scaler.unscale_)
            torch.nn.utils.clip_grad_norm_(parameters=self.text_encoder_params, max_norm=self.clip_grad_norm)
        if ((global_step + 1) % self.grad_accum == 0) or (step == 0):
            for optimizer in self.optimizers:
                self.scaler.unscale_(optimizer)
            self.applied_grad_norms.append(torch.cat([p.grad.flatten() for p in self.unet_params]).norm().item())
            for optimizer in self.optimizers:
                self.scaler.step(optimizer)
            self.scaler.update()
            self._zero_grad(set_to_none=True)

    def _zero_grad(self, set_to_none=False):
        for optimizer in self.optimizers:
            optimizer.zero_grad(set_to_none=set_to_none)


def main(args, batches):
    torch.manual_seed(0)
    unet = nn.Sequential(nn.Linear(4, 8), nn.SiLU(), nn.Linear(8, 4))
    text_encoder = nn.Embedding(10, 4)
    ed_optimizer = EveryDreamOptimizer(args, unet, text_encoder)
    global_step = 0
    for step, (latents, tokens, target) in enumerate(batches):
        model_pred = unet(latents + text_encoder(tokens))
        loss = nn.functional.mse_loss(model_pred, target)
        ed_optimizer.step(loss, step, global_step)
        global_step += 1
    return ed_optimizer


def bug_shows():
    """The unet's applied gradient has norm about 1/65536, not the configured clip norm 1."""
    batches = [(torch.randn(4, 4) * 5, torch.randint(0, 10, (4,)), torch.randn(4, 4) * 5) for _ in range(2)]
    opt = main({"lr": 1e-3, "clip_grad_norm": 1.0}, batches)
    return opt.applied_grad_norms[0] < 1e-3
