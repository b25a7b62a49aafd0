"""Regenerate the tables of docs/reproduction.md: `python -m yarnctl.sim.reproduce dress|haste`."""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

from yarnctl.engine import Engine
from yarnctl.errors import script_exit
from yarnctl.model import ClusterSnapshot
from yarnctl.policies import make_policy
from yarnctl.policies.dress import Category, Dress
from yarnctl.sim.cluster import SimCluster
from yarnctl.sim.report import PolicyResult, summarize
from yarnctl.sim.workload import load_workload

# [DRESS]: small-job completion reduction (%) and makespan change (%), None where not given
DRESS_PAPER: dict[str, tuple[str, float, float | None]] = {
    "dress-mr20": ("Figs. 8-9", 25.7, 0.6),
    "dress-spark20": ("Figs. 6-7, Tab. II", 27.6, 0.6),
    "dress-spark20-tasks": ("Fig. 4's task containers", 27.6, 0.6),
    "dress-spark20-static": ("Figs. 6-7, Tab. II, static executors", 27.6, 0.6),
    "dress-spark20-dynamic": ("Figs. 6-7, Tab. II, dynamic allocation", 27.6, 0.6),
    "dress-mixed-10": ("Fig. 10", 76.1, None),
    "dress-mixed-20": ("Fig. 11", 36.2, None),
    "dress-mixed-30": ("Fig. 12", 21.9, None),
    "dress-mixed-40": ("Fig. 13", 23.7, None),
}
# [HaSTE] Tables 2-4: how much shorter (%) the paper's HaSTE (HaSTE-A on mixed2) makespan is
HASTE_PAPER: dict[str, tuple[str, dict[str, float]]] = {
    "haste-simple": ("haste", {"fifo": 27.0, "fair": 44.6}),
    "haste-mixed1": ("haste", {"fifo": 36.3, "fair": 33.9}),
    "haste-mixed2": ("haste-a", {"fifo": 26.4, "fair": 49.3, "ffd-dp": 34.3}),
    "haste-large": ("haste-a", {}),
}
HASTE_POLICIES = ("fifo", "fair", "ffd-dp", "haste", "haste-a")


class _Recording(Dress):
    """DRESS keeping every category it assigned, for the report (the policy itself forgets finished apps)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, Category] = {}

    def observe(self, snap: ClusterSnapshot) -> None:
        """Classify as DRESS does, then remember: an app is classified only here, so none is missed."""
        super().observe(snap)
        self.seen.update(self.categories)


def _pct(x: float, sign: bool = False) -> str:
    """A percentage as the doc writes it: one decimal, a real minus sign."""
    return (f"{x:+.1f}%" if sign else f"{x:.1f}%").replace("-", "\u2212")


def _avg(result: PolicyResult, ids: set[str]) -> float:
    return statistics.fmean(j.completion_s or 0.0 for j in result.jobs if j.id in ids)


def dress_row(workload: str) -> str:
    """One row of the DRESS table: SD jobs, their average completion under capacity and dress, the paper's."""
    w = load_workload(workload)
    cap = summarize(SimCluster(w, Engine(make_policy("capacity"))).run())
    policy = _Recording()
    dress = summarize(SimCluster(w, Engine(policy)).run())
    small = {j for j, c in policy.seen.items() if c is Category.SD}
    large = {j.id for j in cap.jobs} - small
    red = 100 * (1 - _avg(dress, small) / _avg(cap, small))
    assert cap.makespan_s and dress.makespan_s, f"{workload}: a run did not finish"
    mk = 100 * (dress.makespan_s / cap.makespan_s - 1)
    ld = 100 * (_avg(dress, large) / _avg(cap, large) - 1)
    fig, paper_red, paper_mk = DRESS_PAPER.get(workload, ("", float("nan"), None))
    paper_mk_text = f" ({_pct(paper_mk, sign=True)})" if paper_mk is not None else ""
    return (f"| {workload} ({fig}) | {len(small)} | {_avg(cap, small):.1f} → {_avg(dress, small):.1f} s | "
            f"**{_pct(red)}** ({paper_red}%) | {_pct(mk, sign=True)}{paper_mk_text} | {_pct(ld, sign=True)} |")


def haste_rows(workload: str, seed: int = 0) -> list[str]:
    """The makespan of each HaSTE baseline and how much shorter the paper's policy is, ours beside the paper's."""
    w = load_workload(workload, seed=seed)
    res = {p: summarize(SimCluster(w, Engine(make_policy(p))).run()) for p in HASTE_POLICIES}
    best, paper = HASTE_PAPER.get(workload, ("haste", {}))
    rows = [f"{workload} (seed {seed}): makespan " + ", ".join(f"{p} {res[p].makespan_s:.1f}" for p in HASTE_POLICIES)
            + "; order " + " < ".join(sorted(HASTE_POLICIES, key=lambda p: (res[p].makespan_s or 0.0, p)))]
    ours = res[best].makespan_s or 0.0
    for base in ("fifo", "fair", "ffd-dp"):
        theirs = res[base].makespan_s or 0.0
        diff = 100 * (1 - ours / theirs)
        word = "shorter" if diff >= 0 else "longer"
        pap = f" (paper {paper[base]:.1f}% shorter)" if base in paper else ""
        rows.append(f"| {best} against {base} | {abs(diff):.1f}% {word}{pap} |")
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Print the requested paper's table(s)."""
    p = argparse.ArgumentParser(prog="python -m yarnctl.sim.reproduce", description=__doc__)
    p.add_argument("paper", choices=("dress", "haste"), help="which section of docs/reproduction.md")
    p.add_argument("--workload", "-w", action="append", help="only these workloads (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of drawn durations (haste; default 0)")
    args = p.parse_args(argv)
    for w in args.workload or ():
        load_workload(w)  # a bad name fails before any table is printed
    if args.paper == "dress":
        print("| workload | SD jobs | SD avg completion capacity → dress | reduction (paper) | "
              "makespan change (paper) | LD avg completion |")
        print("|---|---|---|---|---|---|")
        for w in args.workload or DRESS_PAPER:
            print(dress_row(w), flush=True)
    else:
        for w in args.workload or HASTE_PAPER:
            print("\n".join(haste_rows(w, args.seed)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(script_exit(main))
