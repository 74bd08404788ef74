# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location.
# code: AD203 (catalogue: overlap_inplace)
# trigger: a reinforcement-learning frame stack shifts its frames by one slot with
#   `self.frames[1:] = self.frames[:-1]` (source and destination overlap)
# source: none found; the pattern as users write it
# results: frames
import torch


class FrameStack:
    def __init__(self, k, dim):
        self.frames = torch.zeros(k, dim)

    def push(self, observation):
        self.frames[1:] = self.frames[:-1].clone()  # PRIMARY
        self.frames[0] = observation


stack = FrameStack(3, 2)
for step in range(4):
    stack.push(torch.full((2,), float(step)))
frames = stack.frames
