"""A custom op written as an `autograd.Function` whose forward doubles its input in place and returns
it (`x *= 2.0; return x`), used inside a network whose forward then scales the op's output in place
(`logits *= self.s`) before the loss (pytorch/pytorch#30454, "backward not called with custom op").
The reporter saw the custom backward never run; on today's PyTorch the in-place scale of an output
that is the Function's input returned as-is raises "Output 0 of CustomOp is a view and is
being modified inplace ... This view was created inside a custom Function (or because an input was
returned as-is) ... You can fix this by cloning the output of the custom Function." The reporter's
own commented-out line, `logits = logits * self.s`, is the accepted change (the scale is done out
of place, so the custom backward runs).
Source: https://github.com/pytorch/pytorch/issues/30454
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class CustomOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x *= 2.0
        return x

    @staticmethod
    def backward(ctx, grad_output):
        grad_output *= 2.0
        return grad_output


def custom_op(x):
    return CustomOp.apply(x)


class Net(nn.Module):
    def __init__(self, in_channel, out_channel, scale=400.0):
        super(Net, self).__init__()
        self.fc = nn.Linear(in_channel, out_channel)
        self.s = scale

    def forward(self, input):
        x = self.fc(input)
        logits = custom_op(x)
        logits *= self.s
        return logits


if __name__ == '__main__':
    bs = 32
    in_channel = 128
    out_channel = 512
    dummy_x = torch.rand(bs, in_channel)

    net = Net(in_channel, out_channel)
    x = net(dummy_x)
    x.mean().backward()
    result = {"out": x.detach().clone(), "weight_grad": net.fc.weight.grad.clone(),
              "bias_grad": net.fc.bias.grad.clone()}
