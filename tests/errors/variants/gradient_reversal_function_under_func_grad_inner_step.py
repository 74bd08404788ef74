# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...),
#   it must override the setup_context staticmethod. For more details, please see
#   https://pytorch.org/docs/main/notes/extending.func.html
# code: AD231 (catalogue: function_without_setup_context)
# set: 16
# trigger: a domain-adversarial model (DANN) applies a gradient-reversal Function written the classic
#   way, forward(ctx, x, alpha) storing ctx.alpha; a MAML-style inner step takes the gradient of the
#   loss with torch.func.grad over torch.func.functional_call
# source: none found; the gradient reversal layer as DANN implementations write it
# results: domain_loss, grads
import torch
from torch import nn
from torch.func import functional_call, grad


class GradientReversal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):  # PRIMARY
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.alpha * grad_output, None


class DomainAdversarial(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Linear(4, 6)
        self.domain_head = nn.Linear(6, 1)

    def forward(self, x, alpha=0.5):
        h = torch.tanh(self.features(x))
        return self.domain_head(GradientReversal.apply(h, alpha)).squeeze(-1)


def domain_loss_of(params, model, x, domain):
    logits = functional_call(model, params, (x,))
    return nn.functional.binary_cross_entropy_with_logits(logits, domain)


torch.manual_seed(0)
model = DomainAdversarial()
params = {name: p.detach() for name, p in model.named_parameters()}
x, domain = torch.randn(8, 4), torch.randint(0, 2, (8,)).float()
grads = grad(domain_loss_of)(params, model, x, domain)
grads = [grads[name] for name in sorted(grads)]
domain_loss = domain_loss_of(params, model, x, domain)
