"""TorchIO's `RandomBiasField` multiplies the image by a smooth bias field:
`image_dict['data'] *= torch.from_numpy(bias_field)`.  When the sample's
data tensor is an expanded view (a 2D image broadcast along the third
axis, so many elements share one memory location), the in-place product
raises ("unsupported operation: more than one element of the written-to
tensor refers to a single memory location.  Please clone() the tensor").
The fix multiplies out of place: `image_dict['data'] = image_dict['data'] *
torch.from_numpy(bias_field)`.
Buggy line: `image_dict['data'] *= torch.from_numpy(bias_field)` in
`RandomBiasField.apply_transform`.
Expected finding: ADL012 there.
Source: https://github.com/TorchIO-project/torchio/issues/32"""
import numpy as np
import torch


def read_image(slice_2d, depth):
    """A 2D image is stored as a 1 x H x W x 1 volume and broadcast along z."""
    tensor = torch.as_tensor(slice_2d, dtype=torch.float32)[None, :, :, None]
    return tensor.expand(1, tensor.shape[1], tensor.shape[2], depth)


class RandomBiasField:
    def __init__(self, coefficients=0.5, order=2, seed=0):
        self.coefficients = coefficients
        self.order = order
        self.rng = np.random.default_rng(seed)

    def generate_bias_field_map(self, data, order, coefficients):
        shape = np.array(data.shape[1:])
        half_shape = shape / 2
        ranges = [np.arange(-n, n) + 0.5 for n in half_shape]
        meshes = np.asarray(np.meshgrid(*ranges, indexing="ij"))
        meshes = meshes / np.max(np.abs(meshes), axis=tuple(range(1, meshes.ndim)), keepdims=True)
        bias_field = np.zeros(shape)
        for x_order in range(order + 1):
            bias_field += coefficients[x_order] * meshes[0] ** x_order
        return np.exp(bias_field).astype(np.float32)

    def apply_transform(self, sample):
        for image_dict in sample.values():
            coefficients = self.rng.uniform(-self.coefficients, self.coefficients, self.order + 1)
            bias_field = self.generate_bias_field_map(image_dict['data'], self.order, coefficients)
            image_dict['data'] *= torch.from_numpy(bias_field)  # missed: ADL012
        return sample


def run():
    sample = {"t1": {"data": read_image(np.random.default_rng(1).random((4, 4)), depth=3)}}
    RandomBiasField().apply_transform(sample)
