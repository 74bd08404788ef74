"""FocalFormer3D's multi-stage box decoder for LiDAR 3-D detection (focal_decoder.py): from the
second decoder layer on, the RoI features pooled at the previous layer's boxes are added to the
query features in place, `query_feat += roi_feat`. `query_feat` is the previous layer's output,
which that layer's prediction head (a 1x1 convolution) saved for backward, so `loss.backward()`
raises "one of the variables needed for gradient computation has been modified by an inplace
operation: [torch.FloatTensor [2, 16, 6]], which is output 0 of AsStrided, is at version 1;
expected version 0 instead" as soon as there is more than one decoder layer.
Source: https://github.com/NVlabs/FocalFormer3D/issues/25 ("Inplace operation error when training":
"Error occurs when num_decoder_layers > 1 ... `- query_feat += roi_feat` `+ query_feat =
query_feat + roi_feat`").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

C, NUM_PROPOSALS, BEV = 16, 6, 10


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(C, 2)
        self.ffn = nn.Sequential(nn.Linear(C, 32), nn.ReLU(), nn.Linear(32, C))
        self.norm1, self.norm2 = nn.LayerNorm(C), nn.LayerNorm(C)

    def forward(self, query, value):
        query = self.norm1(query + self.attn(query, value, value)[0])
        return self.norm2(query + self.ffn(query))


class FocalDecoder(nn.Module):
    def __init__(self, num_layers=2):
        super().__init__()
        self.decoder = nn.ModuleList(DecoderLayer() for _ in range(num_layers))
        self.prediction_heads = nn.ModuleList(nn.Conv1d(C, 2 + 3, 1) for _ in range(num_layers))
        self.roi_mlp = nn.Sequential(nn.Linear(C, C), nn.ReLU(), nn.Linear(C, C))

    def forward(self, bev_feat, query_feat):
        batch_size = bev_feat.shape[0]
        lidar_feat_flatten = bev_feat.flatten(2)  # B C HW
        centers = None
        outputs = []
        for i, layer in enumerate(self.decoder):
            if centers is not None:
                # Pool BEV features at the previous layer's box centres (RoI features).
                grid_points = (centers.permute(0, 2, 1) * 2 - 1).unsqueeze(2)  # B Pq 1 2
                roi_feat = F.grid_sample(bev_feat, grid_points, align_corners=False).squeeze(-1)  # B C Pq
                roi_feat = self.roi_mlp(roi_feat.transpose(1, 2)).transpose(1, 2)
                query_feat = query_feat + roi_feat
            query_feat = layer(query_feat.permute(2, 0, 1), lidar_feat_flatten.permute(2, 0, 1))
            query_feat = query_feat.permute(1, 2, 0)  # B C Pq
            res_layer = self.prediction_heads[i](query_feat)
            outputs.append(res_layer)
            centers = res_layer[:, :2].sigmoid().detach()
        return outputs


model = FocalDecoder()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

bev_feat = torch.randn(2, C, BEV, BEV)
query_init = torch.randn(2, C, NUM_PROPOSALS)
targets = torch.rand(2, 5, NUM_PROPOSALS)

losses = []
for step in range(3):
    outputs = model(bev_feat, query_init.clone())
    loss = sum(F.l1_loss(out, targets) for out in outputs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
