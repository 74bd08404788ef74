"""TorchServe's default handlers (`BaseHandler.inference` and the image
classifier built on it) ran the model on each request with gradients on:
"The default handlers and some of the examples were missing use of `with
no_grad():` context manager.  This is causing an increase in model memory
post inference" (fixes #499).  Nothing raises; the inference output carries
a graph.
Buggy line: `results = self.model(marshalled_data, *args, **kwargs)` in
`BaseHandler.inference`, no `torch.no_grad()`.
Source: https://github.com/pytorch/serve/pull/501"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BaseHandler:
    def __init__(self):
        self.model = None
        self.device = "cpu"
        self.initialized = False

    def initialize(self, model):
        self.model = model
        self.model.eval()
        self.initialized = True

    def preprocess(self, data):
        return torch.stack([torch.as_tensor(row["body"], dtype=torch.float32) for row in data])

    def inference(self, data, *args, **kwargs):
        marshalled_data = data.to(self.device)
        results = self.model(marshalled_data, *args, **kwargs)  # missed: ADL031
        return results

    def postprocess(self, data):
        return data.tolist()

    def handle(self, data, context=None):
        data_preprocess = self.preprocess(data)
        output = self.inference(data_preprocess)
        self.last_output = output
        return self.postprocess(output)


class ImageClassifier(BaseHandler):
    topk = 2

    def postprocess(self, data):
        ps = F.softmax(data, dim=1)
        probs, classes = torch.topk(ps, self.topk, dim=1)
        return [dict(zip(c.tolist(), p.tolist())) for p, c in zip(probs, classes)]


def bug_shows():
    """The handler's inference output carries the model's graph."""
    torch.manual_seed(0)
    handler = ImageClassifier()
    handler.initialize(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)))
    handler.handle([{"body": [0.1, 0.2, 0.3, 0.4]}, {"body": [1.0, 0.0, -1.0, 0.5]}])
    return handler.last_output.grad_fn is not None
