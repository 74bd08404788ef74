"""Control LoRA training of a Flux transformer (huggingface/diffusers,
examples/flux-control/train_control_lora_flux.py): with `--train_norm_layers` the script turns
requires_grad back on for the normalization layers, then calls
`flux_transformer.add_adapter(transformer_lora_config)`. Adding the adapter marks only the LoRA
parameters as trainable, which switches the norm layers off again; the optimizer is built from the
parameters that require grad, so the norm layers are never trained. Nothing fails.
Source: https://github.com/huggingface/diffusers/pull/11832 ("fix norm not training in
train_control_lora_flux.py"; the fix turns the norm layers on after the adapter is added).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALinear(nn.Module):
    def __init__(self, base, rank):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Parameter(torch.randn(rank, base.in_features) * 0.1)
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank))

    def forward(self, x):
        return self.base_layer(x) + x @ self.lora_A.t() @ self.lora_B.t()


def add_adapter(model, target_names, rank=2):
    """Wrap the target linears with LoRA and mark only the adapter's parameters as trainable."""
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if name in target_names and isinstance(child, nn.Linear):
                setattr(module, name, LoRALinear(child, rank))
    for name, param in model.named_parameters():
        param.requires_grad = "lora_" in name


class FluxBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.proj_out = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.norm(x)
        attn = (self.to_q(h) @ h.transpose(1, 2) / h.shape[-1] ** 0.5).softmax(-1) @ self.to_v(h)
        return x + self.proj_out(attn)


transformer = nn.Sequential(nn.Linear(8, 16), FluxBlock(16), FluxBlock(16), nn.Linear(16, 8))
transformer.requires_grad_(False)
train_norm_layers = True
add_adapter(transformer, target_names={"to_q", "to_v"})
if train_norm_layers:
    for name, param in transformer.named_parameters():
        if "norm" in name:
            param.requires_grad = True

params_to_optimize = [p for p in transformer.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(params_to_optimize, lr=1e-2)

losses = []
for step in range(4):
    latents = torch.randn(3, 5, 8)
    noise = torch.randn_like(latents)
    loss = F.mse_loss(transformer(latents + noise), noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses),
          "params": {name: p.detach().clone() for name, p in transformer.named_parameters()}}
