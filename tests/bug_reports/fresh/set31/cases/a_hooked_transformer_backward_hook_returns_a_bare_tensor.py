"""TransformerLens: a backward hook added with `model.add_hook(name, hook, dir="bwd")` that
returns the (modified) gradient makes `loss.backward()` fail with "hook 'hook' has changed the size
of value". HookPoint registers the user's function through `register_full_backward_hook`, which
expects None or a tuple replacing grad_input; the wrapper passed the user's bare tensor through.
The merged fix normalises the return value in the wrapper: a single tensor is wrapped as
`(result,)`.
Source: https://github.com/TransformerLensOrg/TransformerLens/pull/1175
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HookPoint(nn.Module):
    """Identity module that lets users read or edit activations and their gradients."""

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.handles = []

    def add_hook(self, hook, dir="fwd"):
        if dir == "fwd":
            def full_hook(module, module_input, module_output):
                return hook(module_output, hook=self)
            self.handles.append(self.register_forward_hook(full_hook))
        else:
            def full_hook(module, module_input, module_output):
                result = hook(module_output[0], hook=self)
                return result
            self.handles.append(self.register_full_backward_hook(full_hook))

    def remove_hooks(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def forward(self, x):
        return x


class Block(nn.Module):
    def __init__(self, d_model, index):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, 2, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))
        self.hook_resid_post = HookPoint(f"blocks.{index}.hook_resid_post")

    def forward(self, x):
        h = self.ln(x)
        causal = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)
        x = x + self.attn(h, h, h, attn_mask=causal, need_weights=False)[0]
        x = x + self.mlp(self.ln(x))
        return self.hook_resid_post(x)


class HookedTransformer(nn.Module):
    def __init__(self, vocab=20, d_model=16, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList(Block(d_model, i) for i in range(layers))
        self.unembed = nn.Linear(d_model, vocab)

    def hook_points(self):
        return {m.name: m for m in self.modules() if isinstance(m, HookPoint)}

    def add_hook(self, name, hook, dir="fwd"):
        self.hook_points()[name].add_hook(hook, dir=dir)

    def reset_hooks(self):
        for point in self.hook_points().values():
            point.remove_hooks()

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.unembed(x)


model = HookedTransformer()
model.eval()
grad_norms = []


def damp_hook(grad, hook):
    grad_norms.append(grad.norm().detach())
    return grad * 0.5


model.add_hook("blocks.0.hook_resid_post", damp_hook, dir="bwd")
attributions = []
for prompt in ([1, 4, 7, 2, 9], [3, 3, 8, 1, 0]):
    tokens = torch.tensor([prompt])
    model.zero_grad()
    logits = model(tokens)
    loss = logits[0, -1, 0]
    loss.backward()
    attributions.append(model.embed.weight.grad.clone())
model.reset_hooks()
result = {"attributions": attributions, "grad_norms": torch.stack(grad_norms)}
