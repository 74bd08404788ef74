# helper module of gradient_logger_hook_then_mask_in_place.py (a held-out variant)


class GradientLogger:
    """Records the norm of the gradient that reaches a module's output."""

    def __init__(self):
        self.norms = []

    def attach(self, module):
        module.register_full_backward_hook(self.record)

    def record(self, module, grad_input, grad_output):
        self.norms.append(grad_output[0].norm().item())
