"""A small model compiled by torch.compile, for fxray's end-to-end runner test.

The backend is whatever the launcher applies (fxray run --backend ...); run directly it uses
the default (inductor). Prints the output's shape and checksum so the test sees it ran.
"""

import sys

import torch


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 8)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return torch.softmax(self.fc2(h) * 2.0, dim=-1)


def main():
    torch.manual_seed(0)
    model = Small()
    compiled = torch.compile(model)
    x = torch.randn(4, 16)
    with torch.no_grad():
        y = compiled(x)
    print("out", tuple(y.shape), round(float(y.sum()), 3), "args", sys.argv[1:])


if __name__ == "__main__":
    main()
