"""Policy-sensitivity probes."""
import torch.autograd.forward_ad as fwAD


def attach_observation_tangent(policy, tangent):
    """Make the policy's input a dual tensor carrying `tangent`, so its outputs carry their directional derivative."""
    def make_input_dual(module, inputs):
        return (fwAD.make_dual(inputs[0], tangent),)
    return policy.register_forward_pre_hook(make_input_dual)
