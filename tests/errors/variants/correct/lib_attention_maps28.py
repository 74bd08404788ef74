"""Keeps each watched layer's last output on the layer, for the attention-map dashboard."""


def watch_outputs(model, layer_type):
    def keep_output(module, inputs, output):
        module.last_output = output.detach()  # PRIMARY

    for module in model.modules():
        if isinstance(module, layer_type):
            module.register_forward_hook(keep_output)
