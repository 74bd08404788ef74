"""A TransformerLens-style `HookPoint` (an identity module placed on the residual stream) takes
user hooks through `add_hook(hook, dir=...)`; for `dir="bwd"` the library wraps the hook in a
`register_full_backward_hook` callback that passes the hook's return value straight through. The
reporter's backward hook returns the gradient unchanged (`return grad`), as the documentation's
forward hooks do. A full backward hook must return a tuple of gradients (one per module input),
so PyTorch unpacks the bare tensor along its batch dimension and backward fails with "hook 'hook'
has changed the size of value". The fix (PR 1175) wraps a single tensor as `(result,)` in the
library's callback.
Source: https://github.com/TransformerLensOrg/TransformerLens/issues/1160
(fix: https://github.com/TransformerLensOrg/TransformerLens/pull/1175)
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HookPoint(nn.Module):
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
                return (result,) if isinstance(result, torch.Tensor) else result

            self.handles.append(self.register_full_backward_hook(full_hook))

    def reset_hooks(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []

    def forward(self, x):
        return x


class Block(nn.Module):
    def __init__(self, d_model, d_mlp):
        super().__init__()
        self.ln = nn.LayerNorm(d_model)
        self.mlp_in = nn.Linear(d_model, d_mlp)
        self.mlp_out = nn.Linear(d_mlp, d_model)
        self.hook_resid_post = HookPoint("hook_resid_post")

    def forward(self, resid):
        resid = resid + self.mlp_out(F.gelu(self.mlp_in(self.ln(resid))))
        return self.hook_resid_post(resid)


class TinyTransformer(nn.Module):
    def __init__(self, d_vocab=50, d_model=16, d_mlp=32, n_layers=2):
        super().__init__()
        self.embed = nn.Embedding(d_vocab, d_model)
        self.blocks = nn.ModuleList([Block(d_model, d_mlp) for _ in range(n_layers)])
        self.unembed = nn.Linear(d_model, d_vocab)

    def forward(self, tokens):
        resid = self.embed(tokens)
        for block in self.blocks:
            resid = block(resid)
        return self.unembed(resid)


model = TinyTransformer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
grad_norms = []


def simple_hook(grad, hook):
    grad_norms.append(grad.norm().detach())
    return grad


model.blocks[0].hook_resid_post.add_hook(simple_hook, dir="bwd")

losses = []
for step in range(6):
    tokens = torch.randint(0, 50, (1, 12))
    logits = model(tokens)
    loss = F.cross_entropy(logits[0, :-1], tokens[0, 1:])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

model.blocks[0].hook_resid_post.reset_hooks()
result = {"losses": torch.stack(losses), "grad_norms": torch.stack(grad_norms),
          "params": [p.detach().clone() for p in model.parameters()]}
