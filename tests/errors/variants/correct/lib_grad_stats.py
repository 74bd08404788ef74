# helper module of gradient_average_of_sparse_embedding_bag.py (a held-out variant)


def update_gradient_average(average, module, decay=0.9):
    """An exponential moving average of every parameter's gradient (a monitoring statistic)."""
    for name, p in module.named_parameters():
        average[name] = p.grad.to_dense() * (1 - decay) + average[name] * decay  # PRIMARY
