"""A residual block (for the variant residual_added_in_place_after_relu_module)."""
from torch import nn


class ResidualBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        identity = x
        out = self.relu(self.fc1(x))
        out = out + identity  # PRIMARY
        return self.fc2(out)
