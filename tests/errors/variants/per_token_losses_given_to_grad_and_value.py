# message: grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with 1 dims.
#   Maybe you wanted to use the vjp or jacrev APIs instead?
# code: AD112 (catalogue: func_grad_non_scalar_output)
# set: 14
# trigger: a tiny language model trained with torch.func.grad_and_value over functional_call; the
#   loss function returns F.cross_entropy(..., reduction="none"), one loss per token, kept that way
#   to mask padding later
# source: none found; the pattern as users write it (per-token losses as in sequence models)
# results: list(params.values()), losses
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad_and_value


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 4)
        self.out = nn.Linear(4, 7)

    def forward(self, tokens):
        return self.out(torch.tanh(self.embed(tokens)))


def token_losses(params, model, tokens, targets):
    logits = functional_call(model, params, (tokens,))
    return F.cross_entropy(logits, targets, reduction="none")  # PRIMARY


torch.manual_seed(0)
model = TinyLM()
params = {name: p.detach() for name, p in model.named_parameters()}
tokens, targets = torch.tensor([1, 4, 2, 6, 3]), torch.tensor([4, 2, 6, 3, 0])
losses = []
for _ in range(3):
    grads, loss = grad_and_value(token_losses)(params, model, tokens, targets)
    params = {name: p - 0.5 * grads[name] for name, p in params.items()}
    losses.append(loss)
