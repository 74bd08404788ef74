"""torch-dreams (feature visualisation), `Dreamer.caricature(..., static=True)`: the target
activations are collected once, before the loop, by running the model on the input image with
gradients on (the model's weights require grad), so each target carries a graph. Each iteration
randomly rescales the image parameter; `CaricatureLoss.cosine_dissimilarity` resizes the target to
the activation's size and detaches it only inside `if x.shape != y.shape:`. When the random scale
happens to give the original size, the target is used as it is, graph and all: the first such
iteration backpropagates through (and frees) the target's graph, the next one fails with "Trying
to backward through the graph a second time". It "occurs randomly", as the report says. The
maintainer's fix (commit "Fix #38 detach y manually") detaches `y` whatever its shape.
Source: https://github.com/Mayukhdeb/torch-dreams/issues/38
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def resize_4d_tensor_by_size(x, height, width):
    return F.interpolate(x, size=(height, width), mode="bilinear", align_corners=False)


class Hook:
    def __init__(self, module):
        self.hook = module.register_forward_hook(self.hook_fn)

    def hook_fn(self, module, input, output):
        self.output = output

    def close(self):
        self.hook.remove()


class CaricatureLoss(nn.Module):
    def __init__(self, power=1.):
        super().__init__()
        self.power = power

    def cosine_dissimilarity(self, x, y, eps=1e-6):
        if x.shape != y.shape:
            # if their shapes are not equal (static caricatures), resize the target accordingly
            y = resize_4d_tensor_by_size(y.unsqueeze(0), height=x.shape[-2], width=x.shape[-1]).squeeze(0).detach()

        numerator = (x * y).sum()
        denominator = torch.sqrt((y ** 2).sum()) + eps
        cossim = numerator / denominator
        cossim = torch.maximum(torch.tensor(0.1), cossim)
        return -(cossim * numerator ** self.power)

    def forward(self, layer_outputs, ideal_layer_outputs):
        loss = 0.
        for i in range(len(layer_outputs)):
            loss += self.cosine_dissimilarity(layer_outputs[i], ideal_layer_outputs[i])
        return loss


class ImageParam:
    def __init__(self, height, width, standard_deviation=0.01):
        self.param = (torch.randn(1, 3, height, width) * standard_deviation).requires_grad_()
        self.optimizer = torch.optim.Adam([self.param], lr=9e-3, weight_decay=1e-3)

    def forward(self):
        return torch.sigmoid(self.param)


class Dreamer:
    def __init__(self, model):
        self.model = model.eval()

    def get_default_transforms(self, scale_max, scale_min):
        def transforms(img):
            scale = scale_min + (scale_max - scale_min) * torch.rand(()).item()
            size = max(4, int(img.shape[-1] * scale))
            return resize_4d_tensor_by_size(img, size, size)
        self.transforms = transforms

    def caricature(self, input_tensor, layers, power=1., iters=60, scale_max=1.2, scale_min=0.5, grad_clip=1.,
                   static=True):
        image_parameter = ImageParam(input_tensor.shape[-2], input_tensor.shape[-1])
        hooks = [Hook(layer) for layer in layers]
        caricature_loss = CaricatureLoss(power=power)

        # static: collect the target activations once and use them at each iteration
        self.get_default_transforms(scale_max=scale_max, scale_min=scale_min)
        model_out = self.model(input_tensor)
        ideal_layer_outputs = [hook.output[0] for hook in hooks]

        losses = []
        for i in range(iters):
            image_parameter.optimizer.zero_grad()
            img = image_parameter.forward()
            img_transformed = self.transforms(img)
            model_out = self.model(img_transformed)
            layer_outputs = [hook.output[0] for hook in hooks]
            loss = caricature_loss.forward(layer_outputs=layer_outputs, ideal_layer_outputs=ideal_layer_outputs)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([image_parameter.param], grad_clip)
            image_parameter.optimizer.step()
            losses.append(loss.detach())

        for hook in hooks:
            hook.close()
        return image_parameter, torch.stack(losses)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                      nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
dreamy_boi = Dreamer(model)
image_tensor = torch.rand(1, 3, 10, 10)
param, losses = dreamy_boi.caricature(input_tensor=image_tensor, layers=[model[1], model[3]], power=1.2, static=True)
result = {"losses": losses, "image": param.forward().detach()}
