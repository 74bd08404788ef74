import torch


def top_hessian_eigenvalue(loss, parameters, iterations=3):
    """Power iteration on Hessian-vector products: the sharpness of the loss at the parameters."""
    gradients = torch.autograd.grad(loss, parameters, create_graph=True)
    sizes = [p.numel() for p in parameters]
    direction = torch.ones(sum(sizes)) / sum(sizes) ** 0.5
    estimate = torch.zeros(())
    for _ in range(iterations):
        pieces = [piece.view_as(p) for piece, p in zip(direction.split(sizes), parameters)]  # PRIMARY
        products = torch.autograd.grad(gradients, parameters, grad_outputs=pieces, retain_graph=True)
        flat = torch.cat([product.reshape(-1) for product in products])
        estimate = flat @ direction
        direction = flat / flat.norm()
    return estimate
