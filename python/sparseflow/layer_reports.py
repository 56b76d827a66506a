"""What the per-layer reports (sparsify's, prune's) share: a list of layers looked up by name."""

from __future__ import annotations


class LayerList:
    """``len(report)``, ``for layer in report``, ``"mlp.0" in report`` and ``report["mlp.0"]``
    (or ``report[0]``) over ``self.layers``, each layer having a ``name``."""

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self):
        return iter(self.layers)

    def __contains__(self, key) -> bool:
        if isinstance(key, str):
            return any(layer.name == key for layer in self.layers)
        return key in self.layers

    def __getitem__(self, key):
        if isinstance(key, str):
            for layer in self.layers:
                if layer.name == key:
                    return layer
            raise KeyError(key)
        return self.layers[key]
