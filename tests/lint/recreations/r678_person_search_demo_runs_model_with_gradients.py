"""SeqNet (serend1p1ty/SeqNet, person search), pull request 14 "fixed the CUDA out of memory":
`demo.py` runs the model on a query image and each gallery image with gradients on (`main` was
not under `torch.no_grad()`), so every call builds a graph, memory grows per gallery image, and
the detections and similarities handed to `visualize_result` require grad; the pull request
wraps `main(args)` in `torch.no_grad()` and passes `detections.cpu().numpy()`.
Re-created with a small detector-plus-embedding model in place of SeqNet (boxes regressed from
the image, L2-normalised embeddings), the demo's query / gallery loop and a `visualize_result`
that reads the boxes as an array: with the graph kept, `np.asarray` of the boxes raises
"Can't call numpy() on Tensor that requires grad".
Buggy line: `gallery_output = model(gallery_img)[0]` in `main` (run with gradients on).
Source: https://github.com/serend1p1ty/SeqNet/pull/14"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SeqNet(nn.Module):
    def __init__(self, n_boxes=3, dim=8):
        super().__init__()
        self.n_boxes = n_boxes
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2))
        self.box_head = nn.Linear(32, n_boxes * 4)
        self.emb_head = nn.Linear(32, n_boxes * dim)
        self.dim = dim

    def forward(self, images, targets=None):
        outputs = []
        for img in images:
            f = self.backbone(img.unsqueeze(0)).flatten(1)
            if targets is not None:
                emb = self.emb_head(f).view(self.n_boxes, self.dim)[:1]
                outputs.append(F.normalize(emb, dim=1))
                continue
            boxes = self.box_head(f).view(self.n_boxes, 4).abs().cumsum(1)
            emb = F.normalize(self.emb_head(f).view(self.n_boxes, self.dim), dim=1)
            outputs.append({"boxes": boxes, "embeddings": emb, "scores": torch.ones(self.n_boxes)})
        return outputs


def visualize_result(img_name, detections, similarities):
    rects = []
    for detection, sim in zip(np.asarray(detections), similarities):
        x1, y1, x2, y2 = detection
        rects.append(((x1, y1), x2 - x1, y2 - y1, "{:.2f}".format(sim)))
    return rects


def main(gallery_imgs):
    torch.manual_seed(0)
    model = SeqNet()
    model.eval()

    query_img = [torch.rand(3, 16, 16)]
    query_target = [{"boxes": torch.tensor([[0, 0, 12, 15]])}]
    query_feat = model(query_img, query_target)[0]

    results = []
    for i, img in enumerate(gallery_imgs):
        gallery_img = [img]
        gallery_output = model(gallery_img)[0]  # expect: ADL031
        detections = gallery_output["boxes"]
        gallery_feats = gallery_output["embeddings"]

        # cosine similarities (features are L2-normed)
        similarities = gallery_feats.mm(query_feat.view(-1, 1)).squeeze()

        results.append(visualize_result(f"gallery-{i}.jpg", detections, similarities))
    return results


def run():
    return main([torch.rand(3, 16, 16) for _ in range(2)])


if __name__ == "__main__":
    run()
