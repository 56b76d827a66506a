# docs/python.md's API overview: the objects it names (a 67-vector x for the SpMV of west0067).
# doc-test files: west0067.mtx=data/suitesparse/LAGraph/data/west0067.mtx
import numpy as np
import scipy.sparse
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                       torch.nn.Linear(64, 32))

    def forward(self, x):
        return self.mlp(x)


array = np.arange(12, dtype=np.float32).reshape(3, 4)
matrix = scipy.sparse.random(40, 32, density=0.2, format="csr", random_state=0)
torch_tensor = torch.ones(67)
linear = torch.nn.Linear(32, 16)
model = torch.nn.Sequential()
model.add_module("block", Block())
model.add_module("head", torch.nn.Linear(32, 4))
w = np.zeros((8, 16), dtype=np.float32)
w[:, ::4] = 1.5
w[:, 1::4] = -0.5  # already 2:4
pruned = w.copy()
