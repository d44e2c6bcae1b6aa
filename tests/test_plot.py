"""Plots: files written, not blank, and the drawn data is the data given."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.image import imread  # noqa: E402

from libtopomap import Topology, congestion, torus  # noqa: E402
from libtopomap.generators import fattree, random_shortcut_ring  # noqa: E402
from libtopomap.patterns import load_graph, stencil  # noqa: E402
from libtopomap.plot import (format_bytes, hop_counts, layout, plot_adjacency, plot_hops, plot_link_loads,  # noqa: E402
                             plot_times, save)


def assert_drawn(paths, min_ink=0.01):
    """Both files exist; the PNG has enough non-white pixels in several colours; the SVG has paths."""
    png = [p for p in paths if p.endswith(".png")][0]
    svg = [p for p in paths if p.endswith(".svg")][0]
    img = imread(png)[..., :3]
    ink = np.mean(np.any(img < 0.9, axis=-1))
    assert ink > min_ink, f"{png} is nearly blank ({ink:.4f} of the pixels drawn)"
    colours = np.unique((img.reshape(-1, 3) * 31).astype(int), axis=0)
    assert len(colours) > 8
    text = open(svg, encoding="utf-8").read()
    assert "<svg" in text and text.count("<path") > 10


def texts(fig):
    out = [fig._suptitle.get_text() if fig._suptitle else ""]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
    return " | ".join(out)


def test_adjacency_before_and_after_rcm(tmp_path):
    g = load_graph("torus-scrambled:8x8:1")
    fig = plot_adjacency(torus("8x8"), g)
    assert len(fig.axes) == 4
    bw = [int(ax.get_title().rsplit("bandwidth ", 1)[1]) for ax in fig.axes]
    assert bw[1] < bw[0]  # RCM narrows the scrambled communication graph's band
    assert bw[3] <= bw[2]
    t = texts(fig)
    assert "RCM order" in t and "original order" in t and "process" in t and "vertex" in t
    assert_drawn(save(fig, tmp_path / "adj", dpi=60))
    with pytest.raises(ValueError):
        plot_adjacency()


def test_grid_layout_is_the_torus_grid():
    pos, how = layout(torus("4x4"))
    assert how == "grid"
    rows, cols = np.unravel_index(np.arange(16), (4, 4))
    assert np.array_equal(pos, np.column_stack([cols, -rows]).astype(float))
    # a torus read from a file has no attrs: --dims gives the grid back
    t = torus("4x4")
    bare = Topology(t.names, np.stack([t.link_u, t.link_v], 1))
    assert layout(bare)[1] == "force"
    assert layout(bare, dims="4x4")[1] == "grid"
    # switched networks: hosts at the bottom, switches above
    ft = fattree(4, 2)
    pos, how = layout(ft)
    assert how == "layers"
    assert np.all(pos[ft.hosts, 1] == 0) and np.all(pos[ft.slots == 0, 1] > 0)
    assert layout(random_shortcut_ring(32, 4, seed=1))[1] == "circle"


def test_link_loads_colour_the_links_by_their_load(tmp_path):
    t = torus("4x4")
    g = stencil("4x4")
    bad = np.random.default_rng(2).permutation(16)
    loads = [congestion(t, g, bad), congestion(t, g, np.arange(16))]
    fig = plot_link_loads(t, loads, titles=["original", "mapped"], placements=[bad, np.arange(16)],
                          label="ECMP load (messages per unit capacity)")
    per_link = []
    for x in loads:
        v = np.zeros(t.n_links)
        np.maximum.at(v, t.arc_link, x)
        per_link.append(v)
    ax0, ax1 = fig.axes[:2]
    lc0 = [c for c in ax0.collections if isinstance(c, LineCollection) and c.get_array() is not None][0]
    lc1 = [c for c in ax1.collections if isinstance(c, LineCollection) and c.get_array() is not None][0]
    # one colour scale for both panels, from 0 to the largest load
    assert lc0.norm.vmax == lc1.norm.vmax == pytest.approx(max(v.max() for v in per_link))
    # identity on the stencil: every link carries exactly one message per direction
    assert np.allclose(lc1.get_array(), 1.0) and np.allclose(per_link[1], 1.0)
    # wrap-around links drawn as two stubs each: 32 links, 8 of them wrap -> 24 + 2*8 segments
    assert len(lc1.get_segments()) == 40
    assert sorted(np.unique(lc0.get_array()).round(6)) == sorted(np.unique(per_link[0][per_link[0] > 0]).round(6))
    assert "max" in ax0.get_title() and "original" in ax0.get_title()
    assert fig.axes[-1].get_ylabel().startswith("ECMP load")
    assert_drawn(save(fig, tmp_path / "loads.png", dpi=60))  # the extension is replaced by each format


def test_link_loads_on_other_layouts(tmp_path):
    ft = fattree(4, 2)
    g = load_graph("random:8:3:1")
    h = ft.hosts[:8]
    fig = plot_link_loads(ft, [congestion(ft, g, h)], titles=["fat tree"])
    assert_drawn(save(fig, tmp_path / "ft", dpi=60), min_ink=0.005)
    t3 = torus("3x3x3")
    fig = plot_link_loads(t3, congestion(t3, stencil("3x3x3"), np.arange(27)))
    assert "plane 0 of 3" in [x.get_text() for x in fig.axes[0].texts]
    with pytest.raises(ValueError):
        plot_link_loads(t3, [np.ones(5)])


def test_hop_histogram_counts(tmp_path):
    ring = Topology([f"n{i}" for i in range(8)], [(i, (i + 1) % 8) for i in range(8)])
    steps = [np.array([[0, 1], [1, 2]]), np.array([[2, 3, 5]])]
    h, w = hop_counts(ring, steps, [0, 4, 1, 2])
    assert h.tolist() == [4, 3, 1] and w.tolist() == [1.0, 1.0, 5.0]
    fig = plot_hops(ring, steps, {"original": [0, 4, 1, 2], "mapped": [0, 1, 2, 3]})
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    # 5 bins (0..4 hops) per placement
    assert heights[:5] == [0, 1, 0, 1, 1] and heights[5:] == [0, 3, 0, 0, 0]
    assert ax.get_xlabel().startswith("hops") and ax.get_ylabel() == "messages"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("original (mean 2.67 hops") and labels[1].startswith("mapped (mean 1.00 hops")
    assert_drawn(save(fig, tmp_path / "hops", dpi=60))


def test_times_and_speedup(tmp_path):
    sizes = [1024, 65536, 1 << 20]
    fig = plot_times(sizes, {"original": [2e-6, 1e-4, 4e-3], "mapped": [1e-6, 8e-5, 1e-3]}, title="allreduce",
                     notes={"original": "ascending", "mapped": "two-opt"})
    ax, ax2 = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert ax.get_ylabel() == "simulated time (s)" and ax.get_xlabel() == "message size"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 KiB", "64 KiB", "1 MiB"]
    assert [round(p.get_height(), 6) for p in ax2.patches] == [2.0, 1.25, 4.0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["original", "mapped"]
    assert_drawn(save(fig, tmp_path / "times", dpi=60))
    assert format_bytes(300) == "300 B" and format_bytes(1536) == "1.5 KiB"


@pytest.mark.slow
def test_plot_cli(tmp_path, capsys):
    from libtopomap import save as save_topology
    from libtopomap.cli import main

    topo = tmp_path / "t.json"
    save_topology(str(topo), torus("4x4"))
    for kind, extra in [("adjacency", ["--graph", "stencil:4x4"]),
                        ("loads", ["--graph", "torus-scrambled:4x4:2", "--strategy", "greedy"]),
                        ("hops", ["--collective", "allreduce", "--procs", "8", "--placement", "random",
                                  "--iterations", "2000"])]:
        stem = tmp_path / kind
        assert main(["plot", kind, "--topology", str(topo), *extra, "-o", str(stem)]) == 0
        assert_drawn([f"{stem}.png", f"{stem}.svg"], min_ink=0.005)
    assert main(["plot", "loads", "-o", str(tmp_path / "x")]) == 1
    assert "needs --topology" in capsys.readouterr().err
