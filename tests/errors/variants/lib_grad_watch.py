"""Records the norm of every module's output gradient (helper of global_backward_hook_then_inplace_relu)."""
from torch.nn.modules.module import register_module_full_backward_hook


def watch_gradients(norms):
    def record(module, grad_input, grad_output):
        norms.append(grad_output[0].norm().item())

    return register_module_full_backward_hook(record)
