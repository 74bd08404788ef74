"""Neural style transfer after the PyTorch tutorial: a content-loss module is inserted after a
convolution of a pretrained CNN, with the content image's features as its target. The user
stored the target as computed, `self.target = target`, without `.detach()`. The CNN's weights
require grad (as loaded), so the target carries the graph of the forward pass that made it. The
first backward inside the LBFGS closure frees that graph, and the closure's second evaluation
raises "Trying to backward through the graph a second time". The blog's explanation: the target
is a stated value, not a variable: `self.target = target.detach()`.
Source: https://fangdahan.medium.com/pytorch-style-transfer-tutorial-91e58d6b1055
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super(ContentLoss, self).__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    b, c, h, w = input.size()
    features = input.view(b * c, h * w)
    G = torch.mm(features, features.t())
    return G.div(b * c * h * w)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super(StyleLoss, self).__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        self.loss = F.mse_loss(gram_matrix(input), self.target)
        return input


cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
content_img = torch.rand(1, 3, 16, 16)
style_img = torch.rand(1, 3, 16, 16)

model = nn.Sequential()
content_losses, style_losses = [], []
for i, layer in enumerate(cnn.children()):
    model.add_module("layer_{}".format(i), layer)
    if i == 0:
        style_loss = StyleLoss(model(style_img))
        model.add_module("style_loss_{}".format(i), style_loss)
        style_losses.append(style_loss)
    if i == 2:
        target = model(content_img)
        content_loss = ContentLoss(target)
        model.add_module("content_loss_{}".format(i), content_loss)
        content_losses.append(content_loss)
        style_loss = StyleLoss(model(style_img))
        model.add_module("style_loss_{}".format(i), style_loss)
        style_losses.append(style_loss)

input_img = content_img.clone().requires_grad_(True)
optimizer = torch.optim.LBFGS([input_img], max_iter=5)
losses = []
for step in range(3):
    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        model(input_img)
        style_score = sum(sl.loss for sl in style_losses)
        content_score = sum(cl.loss for cl in content_losses)
        loss = 1000.0 * style_score + content_score
        loss.backward()
        return loss

    losses.append(optimizer.step(closure).detach())

with torch.no_grad():
    input_img.clamp_(0, 1)

result = {"losses": torch.stack(losses), "image": input_img.detach().clone()}
