"""Writes the small ONNX models of this folder (torch.onnx.export from Debian's torch 1.13; random
weights from a fixed seed): a tiny BERT (transformers' BertModel, hidden 8, one layer, two heads)
at opsets 13 (layer norm and GELU decomposed) and 17 (LayerNormalization), an MLP with GELU, a
CNN with batch norm kept as an operator, a CNN with max pooling (pads, ceil_mode, dilation) and
an RMSNorm block (Pow, ReduceMean, Sqrt, Div by a computed value) and a gated CNN with average
pooling, Sigmoid/Exp/Sin/Cos and a mask computed at run time (Equal, Not, Greater, Less, And, Or,
Where, Casts of booleans). Used by tests/unit/graph/test_onnx_import.cpp and as
the seeds of tests/fuzz/fuzz_onnx.cpp. Run from the project root: .venv/bin/python
data/onnx/make_samples.py"""

import pathlib
import warnings

import torch
from torch import nn

warnings.filterwarnings("ignore")
OUT = pathlib.Path(__file__).resolve().parent


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 8)
        self.b = nn.Linear(8, 3)

    def forward(self, x):
        return self.b(nn.functional.gelu(self.a(x)))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y = torch.clamp(self.bn(self.c(x)), 0, 6)
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class PoolCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(2, 4, 3, padding=1)
        self.p1 = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.p2 = nn.MaxPool2d(2, stride=1, dilation=2)

    def forward(self, x):
        return self.p2(self.p1(torch.relu(self.c(x))))


class RmsNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.weight = nn.Parameter(torch.rand(8) + 0.5)

    def forward(self, x):
        h = self.fc(x)
        return h / torch.sqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class GatedMask(nn.Module):
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(2, 4, 3, padding=1)
        self.pool = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)

    def forward(self, x):
        y = self.pool(self.c(x))
        y = y * torch.sigmoid(y.mean((2, 3), keepdim=True))
        y = torch.exp(-y * y) + torch.sin(y) * torch.cos(y)
        keep = ~(torch.relu(y - 0.1) == 0) & (y > 0.2) | (y < -0.5)
        return torch.where(keep, y, torch.zeros_like(y)) + keep.float()


def write_gates_and_masks():
    torch.manual_seed(2)
    torch.onnx.export(GatedMask().eval(), (torch.randn(1, 2, 7, 7),),
                      str(OUT / "cnn_gated_mask.onnx"), input_names=["x"], opset_version=13)


def write_pool_and_norm():
    torch.manual_seed(1)
    torch.onnx.export(PoolCnn().eval(), (torch.randn(1, 2, 6, 6),), str(OUT / "cnn_maxpool.onnx"),
                      input_names=["x"], opset_version=13)
    torch.onnx.export(RmsNorm().eval(), (torch.randn(2, 6),), str(OUT / "rms_norm.onnx"),
                      input_names=["x"], opset_version=13)


def main():
    torch.manual_seed(0)
    torch.onnx.export(Mlp().eval(), (torch.randn(2, 6),), str(OUT / "mlp_gelu.onnx"),
                      input_names=["x"], opset_version=13)
    torch.onnx.export(Cnn().eval(), (torch.randn(1, 2, 5, 5),), str(OUT / "cnn_bn.onnx"),
                      input_names=["x"], opset_version=13, do_constant_folding=False,
                      training=torch.onnx.TrainingMode.EVAL)
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=16, max_position_embeddings=16)
    model = BertModel(config).eval()
    ids = torch.randint(0, 40, (2, 5))
    mask = torch.ones(2, 5, dtype=torch.long)
    for opset in (13, 17):
        torch.onnx.export(model, (ids, mask), str(OUT / f"bert_tiny_opset{opset}.onnx"),
                          input_names=["input_ids", "attention_mask"], opset_version=opset)


if __name__ == "__main__":
    main()
    write_pool_and_norm()
    write_gates_and_masks()
