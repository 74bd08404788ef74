"""Transformers-Tutorials' DETR notebook ("visualize the attention weights of the last decoder
layer"): the model is called as `outputs = model(pixel_values)` with forward hooks that keep the
decoder's cross-attention weights, not under `torch.no_grad()`. The kept boxes,
`bboxes_scaled = rescale_bboxes(outputs.pred_boxes[0, keep], image.size)`, are unpacked in the
plotting loop `for idx, ax_i, (xmin, ymin, xmax, ymax) in zip(keep.nonzero(), axs.T,
bboxes_scaled)` and handed to `plt.Rectangle((xmin, ymin), xmax - xmin, ymax - ymin, ...)`;
matplotlib turns them into numpy arrays and the cell fails with "Can't call numpy() on Tensor that
requires grad. Use tensor.detach().numpy() instead". The accepted PR adds one line in the loop:
`xmin, ymin, xmax, ymax = map(lambda x: x.detach(), (xmin, ymin, xmax, ymax))`. (matplotlib is not
used here: `Rectangle` stores its corners with `np.asarray`, as matplotlib's patch does.)
Source: https://github.com/NielsRogge/Transformers-Tutorials/pull/178
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyDetr(nn.Module):
    def __init__(self, num_classes=3, num_queries=6, d=16):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, d, 4, stride=4), nn.ReLU())
        self.query_embed = nn.Parameter(torch.randn(num_queries, d))
        self.cross_attn = nn.MultiheadAttention(d, 2, batch_first=True)
        self.class_embed = nn.Linear(d, num_classes + 1)
        self.bbox_embed = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    def forward(self, pixel_values):
        memory = self.backbone(pixel_values).flatten(2).transpose(1, 2)
        queries = self.query_embed.unsqueeze(0).expand(pixel_values.shape[0], -1, -1)
        hs, _ = self.cross_attn(queries, memory, memory)
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(1)
    return torch.stack([(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)], dim=1)


def rescale_bboxes(out_bbox, size):
    img_w, img_h = size
    return box_cxcywh_to_xyxy(out_bbox) * torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)


class Rectangle:
    """Stands in for plt.Rectangle: the patch keeps its geometry as numpy arrays."""

    def __init__(self, xy, width, height):
        self.xy = np.asarray(xy, dtype=np.float64)
        self.width = float(np.asarray(width))
        self.height = float(np.asarray(height))


model = TinyDetr()
model.eval()
image_size = (32, 32)
pixel_values = torch.rand(1, 3, *image_size)

dec_attn_weights = []
hook = model.cross_attn.register_forward_hook(lambda self, input, output: dec_attn_weights.append(output[1]))
outputs = model(pixel_values)
hook.remove()

probas = outputs["pred_logits"].softmax(-1)[0, :, :-1]
keep = probas.max(-1).values > 0.28
bboxes_scaled = rescale_bboxes(outputs["pred_boxes"][0, keep], image_size)

h, w = image_size[0] // 4, image_size[1] // 4
patches, maps = [], []
for idx, (xmin, ymin, xmax, ymax) in zip(keep.nonzero(), bboxes_scaled):
    maps.append(dec_attn_weights[0][0, idx].view(h, w).detach())
    patches.append(Rectangle((xmin, ymin), xmax - xmin, ymax - ymin))

result = {"boxes": torch.tensor(np.stack([np.r_[p.xy, p.width, p.height] for p in patches])),
          "maps": torch.stack(maps)}
