"""A perceptual adversarial attack's Newton projection: while some adversarial
images are farther than the bound from their originals (in a feature
distance), it backpropagates the distance into `adv_inputs.grad` and moves the
images a Newton step along that gradient, writing them in place through
`.data`.  `adv_inputs` is the same leaf on every iteration and nothing clears
its `.grad`, so from the second iteration on the step uses the sum of the
gradients of every iteration so far, not the gradient at the current point.
Silent; `bug_shows()` compares the gradient the second step uses with the
true gradient there.  `adv_inputs.grad = None` after reading it (or
`torch.autograd.grad`) gives each step its own gradient.
Source: https://github.com/cassidylaidlaw/perceptual-advex (perceptual_advex/perceptual_attacks.py, NewtonsPerceptualProjection)"""
import torch
import torch.nn as nn


class Features(nn.Module):
    """Stands in for the LPIPS feature network."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x):
        return torch.tanh(self.conv(x)).flatten(1)


class NewtonsPerceptualProjection(nn.Module):
    def __init__(self, bound, lpips_model, projection_overshoot=1e-1, max_iterations=10):
        super().__init__()
        self.bound = bound
        self.lpips_model = lpips_model
        self.projection_overshoot = projection_overshoot
        self.max_iterations = max_iterations

    def forward(self, inputs, adv_inputs, input_features=None, steps_used=None):
        if input_features is None:
            input_features = self.lpips_model(inputs)
        needs_projection = torch.ones_like(adv_inputs[:, 0, 0, 0]).bool()
        iteration = 0
        while needs_projection.sum() > 0 and iteration < self.max_iterations:
            adv_inputs.requires_grad = True
            adv_features = self.lpips_model(adv_inputs[needs_projection])
            adv_lpips = (input_features[needs_projection] - adv_features).norm(dim=1)
            adv_lpips.sum().backward()

            projection_step_size = (adv_lpips - self.bound).clamp(min=0)
            projection_step_size[projection_step_size > 0] += self.projection_overshoot

            grad = adv_inputs.grad.data[needs_projection]  # expect: ADL018
            if steps_used is not None:
                steps_used.append((adv_inputs.detach().clone(), needs_projection.clone(), grad.clone()))
            grad_norm = grad.flatten(1).norm(dim=1)
            inverse_grad = grad / grad_norm[:, None, None, None] ** 2
            adv_inputs.data[needs_projection] = (
                adv_inputs.data[needs_projection]
                - projection_step_size[:, None, None, None] * (1 + self.projection_overshoot) * inverse_grad
            ).clamp(0, 1).detach()

            needs_projection[needs_projection.clone()] = projection_step_size > 0
            iteration += 1
        return adv_inputs.detach()


def bug_shows():
    torch.manual_seed(0)
    features = Features()
    inputs = torch.rand(2, 3, 6, 6)
    adv_inputs = (inputs + 0.5 * torch.randn_like(inputs)).clamp(0, 1)
    steps_used = []
    input_features = features(inputs).detach()  # as the attack that calls the projection passes them
    NewtonsPerceptualProjection(0.05, features, max_iterations=3)(
        inputs, adv_inputs, input_features, steps_used=steps_used)
    assert len(steps_used) >= 2
    point, needs, used = steps_used[1]
    x = point.requires_grad_()
    distance = (input_features[needs] - features(x[needs])).norm(dim=1).sum()
    true_gradient = torch.autograd.grad(distance, x)[0][needs]
    return not torch.allclose(used, true_gradient, atol=1e-6)
