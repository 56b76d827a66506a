"""ONNX Runtime and DeepSparse on one ONNX export, for bench/minilm_end_to_end.py.

Runs in the peers' own virtual environment (.venv-peers: deepsparse 1.8.0 pins numpy < 2 and
onnx 1.14; scripts/install_deps.sh bench makes it), never imported by sparseflow. Prints one JSON
line: median milliseconds per call of each engine, and the first output's checksum inputs.

Usage: onnx_peers.py MODEL.onnx INPUTS.npz --threads 2 --runs 5
"""

import argparse
import json
import statistics
import time

import numpy as np


def median_ms(fn, runs):
    fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("inputs")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--engines", default="onnxruntime,deepsparse")
    args = ap.parse_args()
    data = dict(np.load(args.inputs))
    names = list(data)
    batch = int(data[names[0]].shape[0])
    result = {}
    if "onnxruntime" in args.engines:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        session = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
        feed = {i.name: data[i.name] for i in session.get_inputs()}
        out = session.run(None, feed)[0]
        result["onnxruntime_ms"] = median_ms(lambda: session.run(None, feed), args.runs)
        result["onnxruntime_out"] = out.astype(np.float64).ravel()[:4096].tolist()
    if "deepsparse" in args.engines:
        from deepsparse import Engine

        engine = Engine(model=args.model, batch_size=batch, num_cores=args.threads)
        order = [data[n] for n in engine.input_names] if hasattr(engine, "input_names") else [
            data[n] for n in names]
        out = engine.run(order)[0]
        result["deepsparse_ms"] = median_ms(lambda: engine.run(order), args.runs)
        result["deepsparse_out"] = np.asarray(out).astype(np.float64).ravel()[:4096].tolist()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
