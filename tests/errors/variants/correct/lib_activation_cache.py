def cache_inputs(layer, store):
    """Keep every input of `layer` for offline analysis, without its graph."""

    def keep(module, inputs, output):
        store.append(inputs[0].detach())  # PRIMARY

    return layer.register_forward_hook(keep)
