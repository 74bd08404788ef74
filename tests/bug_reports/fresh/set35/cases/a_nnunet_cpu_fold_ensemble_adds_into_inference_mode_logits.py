"""nnU-Net v2 (MIC-DKFZ/nnUNet), nnunetv2/inference/predict_from_raw_data.py: with more than one
fold, `predict_logits_from_preprocessed_data` sums the folds' logits,
`prediction = self.predict_sliding_window_return_logits(data).to('cpu')` for the first fold and
`prediction += self.predict_sliding_window_return_logits(data).to('cpu')` for the next ones. The
sliding-window prediction now runs under `torch.inference_mode()`, so on a CPU-only machine
`.to('cpu')` returns the inference tensor itself and the in-place `+=` outside inference mode
fails: "Inplace update to inference tensor outside InferenceMode is not allowed". (On a GPU the
copy to the CPU is a normal tensor and the bug does not show.) The maintainer's fix: add
`.clone()` at the end of both lines.
Source: https://github.com/MIC-DKFZ/nnUNet/issues/2364
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyUNet(nn.Module):
    def __init__(self, in_ch=1, num_classes=3, width=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(in_ch, width, 3, padding=1), nn.LeakyReLU(0.01))
        self.down = nn.Conv2d(width, 2 * width, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
        self.seg = nn.Conv2d(2 * width, num_classes, 1)

    def forward(self, x):
        skip = self.enc(x)
        y = self.up(F.leaky_relu(self.down(skip), 0.01))
        return self.seg(torch.cat([skip, y], 1))


def compute_gaussian(tile_size, sigma_scale=1.0 / 8):
    coords = [torch.arange(s, dtype=torch.float32) - (s - 1) / 2 for s in tile_size]
    g = [torch.exp(-c ** 2 / (2 * (s * sigma_scale) ** 2)) for c, s in zip(coords, tile_size)]
    gaussian = g[0][:, None] * g[1][None, :]
    gaussian = gaussian / gaussian.max()
    return gaussian.clamp_min(gaussian[gaussian > 0].min())


class nnUNetPredictor:
    def __init__(self, network, list_of_parameters, patch_size=(8, 8), step=4, num_classes=3):
        self.network = network
        self.list_of_parameters = list_of_parameters
        self.patch_size = patch_size
        self.step = step
        self.num_classes = num_classes

    def predict_logits_from_preprocessed_data(self, data):
        prediction = None
        for params in self.list_of_parameters:
            self.network.load_state_dict(params)
            if prediction is None:
                prediction = self.predict_sliding_window_return_logits(data).to('cpu')
            else:
                prediction += self.predict_sliding_window_return_logits(data).to('cpu')
        if len(self.list_of_parameters) > 1:
            prediction /= len(self.list_of_parameters)
        return prediction

    @torch.inference_mode()
    def predict_sliding_window_return_logits(self, input_image):
        self.network.eval()
        _, H, W = input_image.shape
        predicted_logits = torch.zeros((self.num_classes, H, W))
        n_predictions = torch.zeros((H, W))
        gaussian = compute_gaussian(self.patch_size)
        ph, pw = self.patch_size
        for y in range(0, H - ph + 1, self.step):
            for x in range(0, W - pw + 1, self.step):
                patch = input_image[None, :, y:y + ph, x:x + pw]
                logits = self.network(patch)[0]
                predicted_logits[:, y:y + ph, x:x + pw] += logits * gaussian
                n_predictions[y:y + ph, x:x + pw] += gaussian
        predicted_logits /= n_predictions
        return predicted_logits


folds = []
for fold in range(2):
    torch.manual_seed(fold)
    folds.append(TinyUNet().state_dict())
predictor = nnUNetPredictor(TinyUNet(), folds)
data = torch.randn(1, 16, 16)
prediction = predictor.predict_logits_from_preprocessed_data(data)
segmentation = prediction.argmax(0)

result = {"logits": prediction.clone(), "segmentation": segmentation.float()}
