#!/usr/bin/env python3
"""Draws the speed-ups of a `sparseflow benchmark --json` file as a PNG (matplotlib).

  python plot_speedups.py RESULTS.json OUT.png

One panel per kernel and format; per input a group of bars, one per peer (the same colour in
every panel), of sparseflow's speed-up over that peer (peer time / ours, log scale; above the
line at 1 sparseflow is faster). Cases where ours was wrong, failed or was skipped are marked;
with no peer timed, a panel shows our GFLOP/s. `sparseflow benchmark --plot` runs it and renames
OUT.png into place only when it succeeds.
"""
import json
import math
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:
    sys.exit(f"plot_speedups.py: matplotlib is not available ({e}; Python {sys.executable}); "
             "Debian: apt-get install python3-matplotlib")


def panels(results):
    """{(kernel, format): [case, ...]} in the order the cases ran."""
    out = {}
    for case in results["results"]:
        out.setdefault((case["kernel"], case["format"]), []).append(case)
    return out


def speedup(case, peer):
    cell = next((q for q in case["peers"] if q["peer"] == peer), None)
    return cell["speedup"] if cell and cell["speedup"] else math.nan


def draw(ax, title, cases, peers, colours):
    xs = list(range(len(cases)))
    width = 0.8 / max(1, len(peers))
    timed = False
    for i, peer in enumerate(peers):
        heights = [speedup(c, peer) for c in cases]
        if all(math.isnan(h) for h in heights):
            continue
        timed = True
        ax.bar([x - 0.4 + width * (i + 0.5) for x in xs], heights, width, color=colours[peer])
    if timed:
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel("speed-up (peer / ours)")
    else:
        ax.bar(xs, [c["gflops"] or math.nan for c in cases], 0.6, color="tab:gray")
        ax.set_ylabel("our GFLOP/s (no peer timed)")
    for x, c in zip(xs, cases):
        if c["status"] != "ok":
            ax.text(x, 0.5, c["status"].upper(), transform=ax.get_xaxis_transform(), ha="center",
                    color="red" if c["status"] in ("wrong", "failed") else "gray",
                    fontsize="small")
    ax.set_xticks(xs)
    ax.set_xticklabels([c["input"] for c in cases], rotation=30, ha="right", fontsize="small")
    ax.set_xlim(-0.6, len(cases) - 0.4)
    ax.set_title(title, fontsize="medium")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    with open(sys.argv[1]) as f:
        results = json.load(f)
    peers = [p["peer"] for p in results["peers"] if p["available"]]
    colours = {p: f"C{i}" for i, p in enumerate(peers)}
    groups = panels(results)
    if not groups:
        sys.exit("plot_speedups.py: the results hold no case to draw")
    inputs = max(len(cases) for cases in groups.values())
    fig, axes = plt.subplots(len(groups), 1, squeeze=False,
                             figsize=(max(6.0, 2.0 + 0.9 * inputs), 1.0 + 3.0 * len(groups)))
    for ax, ((kernel, fmt), cases) in zip(axes[:, 0], groups.items()):
        draw(ax, f"{kernel} ({fmt})", cases, peers, colours)
    handles = [matplotlib.patches.Patch(color=colours[p], label=p) for p in peers]
    if handles:
        fig.legend(handles=handles, loc="upper right", ncol=min(len(handles), 6),
                   fontsize="small")
    machine = results["machine"]
    fig.suptitle(f"sparseflow speed-up over each peer: {machine['cpu']}, "
                 f"{results['settings']['threads']} threads", x=0.02, ha="left",
                 fontsize="medium")
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(sys.argv[2], format="png", dpi=100)


if __name__ == "__main__":
    main()
