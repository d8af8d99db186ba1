#!/usr/bin/env python3
"""Plots ms per step against body count as an SVG (standard library only, so it runs on
any Debian 12 without plotting packages).

    python3 bench/scale_plot.py SCALE.tsv OUT.svg

SCALE.tsv is the table bench/run_benchmarks.sh writes in MODE=scale: a header line, then
per scene: scene, bodies, keel_t1_ms, keel_t2_ms, bullet_ms (and CPU columns, not
plotted). A value that is not a number ("n/a": a run failed) leaves that point out.
"""

import sys
from pathlib import Path

SERIES = [("keel_t1_ms", "Keel, 1 thread", "#1f77b4"),
          ("keel_t2_ms", "Keel, 2 threads", "#2ca02c"),
          ("bullet_ms", "Bullet 3.24, 1 thread", "#d62728")]
W, H, LEFT, RIGHT, TOP, BOTTOM = 640, 400, 70, 200, 30, 50


def number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and 0.0 <= value < 1e9 else None


def read_rows(path):
    lines = Path(path).read_text().splitlines()
    if not lines:
        raise SystemExit(f"{path}: empty")
    header = lines[0].split("\t")
    rows = []
    for line in lines[1:]:
        cells = line.split("\t")
        if len(cells) != len(header):
            raise SystemExit(f"{path}: a line has {len(cells)} cells, the header {len(header)}")
        rows.append(dict(zip(header, cells)))
    rows.sort(key=lambda r: number(r["bodies"]) or 0.0)
    return rows


def nice_step(span):
    """The smallest of 1, 2, 5 times a power of ten that cuts `span` into at most 8 steps."""
    for exponent in range(-3, 10):
        for mantissa in (1, 2, 5):
            step = mantissa * 10.0 ** exponent
            if span / step <= 8:
                return step
    return span


def svg(rows):
    xs = [number(r["bodies"]) for r in rows]
    ys = [number(r[key]) for r in rows for key, _, _ in SERIES]
    x_max = max([x for x in xs if x is not None] + [1.0]) * 1.05
    y_max = max([y for y in ys if y is not None] + [0.1]) * 1.1
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x):
        return LEFT + pw * x / x_max

    def py(y):
        return TOP + ph * (1.0 - y / y_max)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{LEFT}" y="18" font-size="14">ms per step against dynamic bodies (sleep off)</text>']
    step = nice_step(y_max)
    y = 0.0
    while y <= y_max:
        out.append(f'<line x1="{LEFT}" y1="{py(y):.1f}" x2="{LEFT + pw}" y2="{py(y):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{py(y) + 4:.1f}" text-anchor="end">{y:g}</text>')
        y += step
    for x in xs:
        if x is not None:
            out.append(f'<text x="{px(x):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{int(x)}</text>')
    out.append(f'<line x1="{LEFT}" y1="{TOP + ph}" x2="{LEFT + pw}" y2="{TOP + ph}" stroke="black"/>')
    out.append(f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + ph}" stroke="black"/>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{H - 10}" text-anchor="middle">dynamic bodies</text>')
    out.append(f'<text x="16" y="{TOP + ph / 2}" transform="rotate(-90 16 {TOP + ph / 2})" text-anchor="middle">ms per step</text>')
    for n, (key, label, colour) in enumerate(SERIES):
        points = [(px(x), py(number(r[key]))) for r, x in zip(rows, xs) if x is not None and number(r[key]) is not None]
        if len(points) > 1:
            path = " ".join(f"{a:.1f},{b:.1f}" for a, b in points)
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for a, b in points:
            out.append(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5" fill="{colour}"/>')
        ly = TOP + 20 + 22 * n
        out.append(f'<line x1="{W - RIGHT + 15}" y1="{ly}" x2="{W - RIGHT + 40}" y2="{ly}" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{W - RIGHT + 46}" y="{ly + 4}">{label}</text>')
    labels = ", ".join(r["scene"] for r in rows)
    out.append(f'<text x="{W - RIGHT + 15}" y="{TOP + 100}" font-size="10">scenes: {labels}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    Path(sys.argv[2]).parent.mkdir(parents=True, exist_ok=True)
    Path(sys.argv[2]).write_text(svg(read_rows(sys.argv[1])))
    print("wrote", sys.argv[2])


if __name__ == "__main__":
    main()
