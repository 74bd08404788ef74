"""Running a Mask R-CNN for inference (Okery/PyTorch-Simple-MaskRCNN, `model/transform.py`): the
user puts the model in eval mode and calls it on an image without `torch.no_grad()`. The
postprocessing pastes each predicted mask into its box with
`for m, b, im in zip(mask, box, im_mask): ... im[y1:y2, x1:x2] = m[...]`. Iterating over a tensor
gives the rows of `torch.unbind`, views made in no-grad mode; writing a mask that requires grad
into one of them raises "A view was created in no_grad mode and is being modified inplace with
grad mode enabled". The issue was closed; the repository's own demo and `evaluate()` run the model
under `torch.no_grad()`, which is what the hand-written version does.
Source: https://github.com/Okery/PyTorch-Simple-MaskRCNN/issues/15
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

M = 6  # mask resolution of the head


class TinyMaskRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, padding=1)
        self.box_head = nn.Linear(8, 4)
        self.mask_head = nn.Conv2d(8, 1, 1)

    def forward(self, image):
        feat = torch.relu(self.backbone(image[None]))
        pooled = F.adaptive_avg_pool2d(feat, M)
        n = 3
        boxes = torch.tensor([[2.0, 2.0, 10.0, 9.0], [5.0, 1.0, 14.0, 12.0], [0.0, 6.0, 7.0, 15.0]])
        scores = self.box_head(feat.mean(dim=(2, 3))).sigmoid().expand(n, 4)[:, 0]
        masks = self.mask_head(pooled).sigmoid().expand(n, 1, M, M)[:, 0] * scores[:, None, None]
        result = {"boxes": boxes, "masks": masks}
        return postprocess(result, image.shape[-2:])


def paste_masks_in_image(mask, box, image_shape):
    N = mask.shape[0]
    im_mask = torch.zeros((N,) + tuple(image_shape), dtype=mask.dtype)
    for m, b, im in zip(mask, box.to(torch.int64), im_mask):
        b = b.tolist()
        w = max(b[2] - b[0], 1)
        h = max(b[3] - b[1], 1)
        m = F.interpolate(m[None, None], size=(h, w), mode="bilinear", align_corners=False)[0][0]
        x1, y1 = max(b[0], 0), max(b[1], 0)
        x2, y2 = min(b[2], image_shape[1]), min(b[3], image_shape[0])
        im[y1:y2, x1:x2] = m[(y1 - b[1]):(y2 - b[1]), (x1 - b[0]):(x2 - b[0])]
    return im_mask


def postprocess(result, image_shape):
    result["masks"] = paste_masks_in_image(result["masks"], result["boxes"], image_shape)
    return result


model = TinyMaskRCNN()
model.eval()
img = torch.rand(3, 16, 16)
p = model(img)

result = {"masks": p["masks"].detach(), "boxes": p["boxes"]}
