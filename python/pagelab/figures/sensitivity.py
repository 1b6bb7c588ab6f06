"""The robustness figure of ``pagelab reproduce NAME --sensitivity``: one row per claim,
one column per variant of the sensitivity ranges (the file's own settings first), each
cell the claim's verdict there. Verdicts are told apart in black-and-white print by
gray level and hatching; each row ends with the share of variants where the claim
holds."""

from __future__ import annotations

from typing import Sequence

from .style import _pyplot, _save

#: verdict -> (fill, hatch), darkest for reproduced
VERDICT_STYLE = {"reproduced": ("0.2", ""), "partly": ("0.6", ""), "not reproduced": ("white", "xx"),
                 "not measured": ("white", "..")}


def draw_sensitivity(ledger: Sequence, title: str):
    """``ledger``: objects with ``claim.id`` and ``variants`` [(label, verdict), ...]."""
    from matplotlib.patches import Patch, Rectangle

    rows = [r for r in ledger if r.variants]
    labels = [label for label, _ in rows[0].variants] if rows else []
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(min(18, 3 + 0.42 * len(labels)), 1.2 + 0.36 * max(len(rows), 1)))
    for y, r in enumerate(rows):
        for x, (_label, verdict) in enumerate(r.variants):
            fill, hatch = VERDICT_STYLE[verdict]
            ax.add_patch(Rectangle((x, y), 1, 1, facecolor=fill, hatch=hatch, edgecolor="black", linewidth=0.5))
        k = sum(1 for _, v in r.variants if v == "reproduced")
        ax.text(len(labels) + 0.2, y + 0.5, f"{k}/{len(r.variants)}", va="center", fontsize="small")
    ax.set_xlim(0, len(labels) + 1.2)
    ax.set_ylim(len(rows), 0)
    ax.set_yticks([y + 0.5 for y in range(len(rows))])
    ax.set_yticklabels([r.claim.id for r in rows], fontsize="small")
    ax.set_xticks([x + 0.5 for x in range(len(labels))])
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize="x-small")
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=f, hatch=h, edgecolor="black", label=v) for v, (f, h) in VERDICT_STYLE.items()]
    ax.legend(handles=handles, frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title, loc="left")
    return fig


def plot_sensitivity(ledger: Sequence, path, title: str) -> None:
    _save(draw_sensitivity(ledger, title), path)
