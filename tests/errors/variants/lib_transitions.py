# helper module of consecutive_step_products_written_over_shifted_slices.py (a held-out variant)


def consecutive_products(probabilities):
    """Each step's probability times the previous step's (the first step kept as it is), as NumPy's
    `p[1:] *= p[:-1]` computes it."""
    products = probabilities.clone()
    products[1:].mul_(products[:-1])  # PRIMARY
    return products
