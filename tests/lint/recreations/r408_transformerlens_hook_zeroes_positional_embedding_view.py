"""TransformerLens: with gradients turned off (`torch.set_grad_enabled(False)`),
a hook on `hook_pos_embed` that edits its activation in place, `z[:] = 0.0`,
overwrote the model's positional embedding matrix `W_pos` itself: the
`PosEmbed` module returns a slice of the parameter broadcast over the batch
(a view), so the hook writes through into the parameter.  Every later run of
the model uses the zeroed embedding.  The fix clones the activation before a
hook sees it (or hooks return a new tensor).
Buggy line: `z[:] = 0.0` in `sketchy_remove_pos_embed`.
Source: https://github.com/TransformerLensOrg/TransformerLens/issues/157"""
import torch
import torch.nn as nn


class HookPoint(nn.Module):
    def forward(self, x):
        return x


class PosEmbed(nn.Module):
    def __init__(self, n_ctx=8, d_model=4):
        super().__init__()
        self.W_pos = nn.Parameter(torch.randn(n_ctx, d_model))

    def forward(self, tokens):
        batch, pos = tokens.shape
        return self.W_pos[:pos, :].unsqueeze(0).expand(batch, pos, -1)


class TinyTransformer(nn.Module):
    def __init__(self, vocab=10, d_model=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos_embed = PosEmbed(d_model=d_model)
        self.hook_pos_embed = HookPoint()
        self.unembed = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.unembed(self.embed(tokens) + self.hook_pos_embed(self.pos_embed(tokens)))

    def run_with_hooks(self, tokens, fwd_hooks):
        handles = [getattr(self, name).register_forward_hook(lambda m, i, o, fn=fn: fn(o, m)) for name, fn in fwd_hooks]
        try:
            return self(tokens)
        finally:
            for handle in handles:
                handle.remove()


def sketchy_remove_pos_embed(z, hook):
    z[:] = 0.0  # missed: none
    return z


def bug_shows():
    """After one hooked run without gradients, `W_pos` itself is zero."""
    torch.manual_seed(0)
    model = TinyTransformer()
    with torch.set_grad_enabled(False):
        model.run_with_hooks(torch.tensor([[1, 2, 3]]), fwd_hooks=[("hook_pos_embed", sketchy_remove_pos_embed)])
    return bool((model.pos_embed.W_pos[:3] == 0).all())
