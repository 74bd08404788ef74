"""Latent diffusion fine-tuning (CompVis/stable-diffusion, ldm/modules/diffusionmodules/util.py): the
UNet's transformer blocks run through ldm's own gradient checkpoint, an autograd.Function whose
backward recomputes the block and calls torch.autograd.grad on the block's inputs and on every
parameter the block passed it (`checkpoint(self._forward, (x, context), self.parameters(), flag)`).
The user froze the CrossAttention layers (requires_grad=False) to fine-tune the rest; the checkpoint
still hands the frozen parameters to autograd.grad, and the first backward() stops with
"One of the differentiated Tensors does not require grad".
Source: https://github.com/CompVis/stable-diffusion/issues/784 ("freezing some blocks in UNet, and has
RuntimeError: One of the differentiated Tensors does not require grad error"; the correct version
gives the checkpoint only the parameters that require grad).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CheckpointFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, length, *args):
        ctx.run_function = run_function
        ctx.input_tensors = list(args[:length])
        ctx.input_params = list(args[length:])
        with torch.no_grad():
            output = ctx.run_function(*ctx.input_tensors)
        return output

    @staticmethod
    def backward(ctx, *output_grads):
        inputs = [x.detach().requires_grad_(True) for x in ctx.input_tensors]
        with torch.enable_grad():
            output = ctx.run_function(*inputs)
        grads = torch.autograd.grad(output, inputs + ctx.input_params, output_grads, allow_unused=True)
        return (None, None) + grads


def checkpoint(func, inputs, params, flag):
    if flag:
        args = tuple(inputs) + tuple(params)
        return CheckpointFunction.apply(func, len(inputs), *args)
    return func(*inputs)


class CrossAttention(nn.Module):
    def __init__(self, dim, context_dim):
        super().__init__()
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(context_dim, dim, bias=False)
        self.to_v = nn.Linear(context_dim, dim, bias=False)

    def forward(self, x, context):
        q, k, v = self.to_q(x), self.to_k(context), self.to_v(context)
        weights = (q @ k.transpose(1, 2) / q.shape[-1] ** 0.5).softmax(dim=-1)
        return weights @ v


class TransformerBlock(nn.Module):
    def __init__(self, dim, context_dim, use_checkpoint=True):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = CrossAttention(dim, context_dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))
        self.checkpoint = use_checkpoint

    def forward(self, x, context):
        return checkpoint(self._forward, (x, context), self.parameters(), self.checkpoint)

    def _forward(self, x, context):
        x = x + self.attn(self.norm(x), context)
        return x + self.ff(x)


class TinyUNet(nn.Module):
    def __init__(self, channels=8, context_dim=6):
        super().__init__()
        self.conv_in = nn.Conv2d(4, channels, 3, padding=1)
        self.block = TransformerBlock(channels, context_dim)
        self.conv_out = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, latents, context):
        h = self.conv_in(latents)
        b, c, hh, ww = h.shape
        tokens = self.block(h.flatten(2).transpose(1, 2), context)
        h = tokens.transpose(1, 2).reshape(b, c, hh, ww)
        return self.conv_out(h)


unet = TinyUNet()
for module in unet.modules():
    if isinstance(module, CrossAttention):
        for param in module.parameters():
            param.requires_grad = False
optimizer = torch.optim.AdamW([p for p in unet.parameters() if p.requires_grad], lr=1e-3)

losses = []
for step in range(3):
    latents = torch.randn(2, 4, 4, 4)
    context = torch.randn(2, 5, 6)
    noise = torch.randn_like(latents)
    noisy = latents + 0.5 * noise
    loss = F.mse_loss(unet(noisy, context), noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in unet.parameters()]}
