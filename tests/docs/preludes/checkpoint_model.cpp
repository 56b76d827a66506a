// docs/tools.md's checkpoint example: model.safetensors with a 2-d weight and a 1-d bias.
{
  sparseflow::CheckpointWriter model;
  model.add("layer.mlp.weight", docs::denseTensor({8, 16}));
  model.add("layer.mlp.bias", docs::denseTensor({8}));
  model.write("model.safetensors");
}
// doc-test: after
docs::expect(sparseflow::Checkpoint::open("model-2of4.safetensors").entries().size() == 2,
             "model-2of4.safetensors holds both tensors");
