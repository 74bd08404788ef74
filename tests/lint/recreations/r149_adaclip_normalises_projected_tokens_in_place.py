"""AdaCLIP (zero-shot anomaly detection with hybrid learnable prompts): the
visual branch projects the CLIP patch tokens of several layers with a
projection module that returns a list, then L2-normalises each element in
place, `proj_patch_tokens[layer] /= proj_patch_tokens[layer].norm(dim=-1,
keepdim=True)`, and the class token the same way.  The norm keeps its input
and result for backward, so training fails at `loss.backward()` ("output 0
of ... is at version 1; expected version 0"); the pull request makes both
divisions out of place.
Source: https://github.com/caoyunkang/AdaCLIP/pull/46"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ProjectLayer(nn.Module):
    def __init__(self, input_dim, output_dim, num_replicas):
        super().__init__()
        self.head = nn.ModuleList([nn.Linear(input_dim, output_dim) for _ in range(num_replicas)])
        self.num_replicas = num_replicas

    def forward(self, tokens):
        out_tokens = []
        for i in range(self.num_replicas):
            temp = self.head[i](tokens[i][:, 1:, :])
            out_tokens.append(temp)
        return out_tokens


class ClsProjectLayer(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.head = nn.ModuleList([nn.Linear(input_dim, output_dim)])

    def forward(self, x):
        return [self.head[0](x)]


class AdaCLIPHead(nn.Module):
    def __init__(self, width=8, embed_dim=6, output_layers=(1, 2)):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(width, width) for _ in range(max(output_layers))])
        self.output_layers = output_layers
        self.patch_token_layer = ProjectLayer(width, embed_dim, len(output_layers))
        self.cls_token_layer = ClsProjectLayer(width, embed_dim)

    def encode_image(self, x):
        patch_tokens = []
        for indx, blk in enumerate(self.blocks):
            x = x + torch.tanh(blk(x))
            if (indx + 1) in self.output_layers:
                patch_tokens.append(x)
        return x[:, 0, :], patch_tokens

    def proj_visual_tokens(self, image_features, patch_tokens):
        proj_patch_tokens = self.patch_token_layer(patch_tokens)
        for layer in range(len(proj_patch_tokens)):
            proj_patch_tokens[layer] /= proj_patch_tokens[layer].norm(dim=-1, keepdim=True)  # expect: ADL001
        proj_cls_tokens = self.cls_token_layer(image_features)[0]
        proj_cls_tokens /= proj_cls_tokens.norm(dim=-1, keepdim=True)  # expect: ADL001
        return proj_cls_tokens, proj_patch_tokens

    def forward(self, image_tokens, text_features):
        image_features, patch_tokens = self.encode_image(image_tokens)
        proj_cls_tokens, proj_patch_tokens = self.proj_visual_tokens(image_features, patch_tokens)
        anomaly_maps = [100. * p @ text_features for p in proj_patch_tokens]
        anomaly_score = 100. * proj_cls_tokens @ text_features
        return anomaly_maps, anomaly_score


def train_one_epoch(model, loader, text_features):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for image_tokens, masks, labels in loader:
        anomaly_maps, anomaly_score = model(image_tokens, text_features)
        loss = F.cross_entropy(anomaly_score, labels)
        for anomaly_map in anomaly_maps:
            loss = loss + F.cross_entropy(anomaly_map.permute(0, 2, 1), masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    text_features = F.normalize(torch.randn(6, 2), dim=0)
    loader = [(torch.randn(2, 5, 8), torch.randint(0, 2, (2, 4)), torch.tensor([0, 1]))]
    train_one_epoch(AdaCLIPHead(), loader, text_features)
