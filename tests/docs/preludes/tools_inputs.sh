# docs/tools.md's command lines: model.safetensors (MLP weights, a bias, a head) and weights.npy.
"$SPARSEFLOW_DOC_PYTHON" - <<'PY'
import json, struct
import numpy as np
rng = np.random.default_rng(0)
tensors = {"layers.0.mlp.fc1.weight": rng.standard_normal((32, 64)).astype(np.float32),
           "layers.0.mlp.fc1.bias": rng.standard_normal(32).astype(np.float32),
           "head.weight": rng.standard_normal((8, 32)).astype(np.float32)}
header, data = {}, b""
for name, array in tensors.items():
    raw = array.tobytes()
    header[name] = {"dtype": "F32", "shape": list(array.shape),
                    "data_offsets": [len(data), len(data) + len(raw)]}
    data += raw
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open("model.safetensors", "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + data)
np.save("weights.npy", rng.standard_normal((16, 32)).astype(np.float32))
PY
