# helper module of backward_pre_hook_then_relu_in_place.py (a held-out variant)


class GradientBudget:
    """Scales the gradient that reaches a module's output down to a maximum norm."""

    def __init__(self, max_norm):
        self.max_norm = max_norm
        self.norms = []

    def attach(self, module):
        module.register_full_backward_pre_hook(self.limit)

    def limit(self, module, grad_output):
        norm = grad_output[0].norm()
        self.norms.append(norm.item())
        return (grad_output[0] * min(1.0, self.max_norm / (norm.item() + 1e-12)),)
