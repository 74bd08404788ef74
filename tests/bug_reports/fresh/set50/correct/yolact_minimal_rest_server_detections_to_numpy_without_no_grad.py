"""A REST web service around YOLACT (Yolact_minimal: real-time instance segmentation; a network
predicts class scores, boxes and mask coefficients per anchor plus a set of prototype masks, and
the masks are the sigmoid of the prototypes times the coefficients). The fork's server runs the
detection for an uploaded image in `process()` the way detect.py does, but without detect.py's
`with torch.no_grad():`, so the outputs of the (trained, eval-mode) network require grad, and
`draw_img` fails on `[x[:args.visual_top_k].cpu().numpy() for x in results[:3]]`: "Can't call
numpy() on Variable that requires grad. Use var.detach().numpy() instead." The maintainer's
answer: keep `with torch.no_grad():` around the detection, as detect.py has it.
Source: https://github.com/feiyuhuahuo/Yolact_minimal/issues/9
expect: raises"""
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
COLORS = np.array([[0, 0, 0], [244, 67, 54], [33, 150, 243], [76, 175, 80], [255, 193, 7]], dtype=np.uint8)


class Yolact(nn.Module):
    def __init__(self, num_classes=5, num_anchors=3, coef_dim=8):
        super().__init__()
        self.num_classes, self.num_anchors, self.coef_dim = num_classes, num_anchors, coef_dim
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU())
        self.proto_net = nn.Sequential(nn.Conv2d(32, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, coef_dim, 1))
        self.conf_layer = nn.Conv2d(32, num_anchors * num_classes, 3, padding=1)
        self.bbox_layer = nn.Conv2d(32, num_anchors * 4, 3, padding=1)
        self.coef_layer = nn.Conv2d(32, num_anchors * coef_dim, 3, padding=1)

    def forward(self, img):
        x = self.backbone(img)
        proto_p = F.relu(self.proto_net(x)).permute(0, 2, 3, 1).contiguous()
        class_p = self.conf_layer(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, self.num_classes)
        box_p = self.bbox_layer(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, 4)
        coef_p = torch.tanh(self.coef_layer(x).permute(0, 2, 3, 1).reshape(x.size(0), -1, self.coef_dim))
        return F.softmax(class_p, -1), box_p, coef_p, proto_p


def nms(class_p, box_p, coef_p, proto_p, cfg):
    scores, class_ids = class_p[0, :, 1:].max(dim=1)
    keep = scores.argsort(descending=True)[:cfg.top_k]
    return class_ids[keep], scores[keep], box_p[0, keep].sigmoid(), coef_p[0, keep], proto_p[0]


def after_nms(ids_p, class_p, box_p, coef_p, proto_p, img_h, img_w):
    masks = torch.sigmoid(proto_p @ coef_p.t()).permute(2, 0, 1)
    masks = F.interpolate(masks[None], (img_h, img_w), mode="bilinear", align_corners=False)[0]
    return ids_p, class_p, box_p * torch.tensor([img_w, img_h, img_w, img_h]), masks > 0.5


def draw_img(results, img_origin, args):
    class_ids, classes, boxes = [x[:args.visual_top_k].cpu().numpy() for x in results[:3]]
    masks = results[3][:args.visual_top_k].cpu().numpy()
    masks_semantic = (masks * (class_ids[:, None, None] + 1)).astype("int").max(axis=0)
    img_fused = (0.4 * COLORS[masks_semantic] + 0.6 * img_origin).astype("uint8")
    return img_fused, class_ids, classes, boxes


def process(net, img_origin, args):
    img = torch.from_numpy(img_origin).float().permute(2, 0, 1)[None] / 255.0
    with torch.no_grad():
        class_p, box_p, coef_p, proto_p = net(img)
        ids_p, class_p, box_p, coef_p, proto_p = nms(class_p, box_p, coef_p, proto_p, args)
        results = after_nms(ids_p, class_p, box_p, coef_p, proto_p, *img_origin.shape[:2])
        return draw_img(results, img_origin, args)


net = Yolact()
net.eval()
args = SimpleNamespace(top_k=20, visual_top_k=5)
img_origin = (np.random.RandomState(0).rand(32, 32, 3) * 255).astype("uint8")
img_numpy, class_ids, classes, boxes = process(net, img_origin, args)

result = {"image": torch.from_numpy(img_numpy), "class_ids": torch.from_numpy(class_ids),
          "scores": torch.from_numpy(classes), "boxes": torch.from_numpy(boxes)}
