"""HaSTE: task assignment by fitness and urgency ([HaSTE] Sec. 3.2-3.4, Alg. 1, Eq. 1-4).

On each heartbeat of node S_j:
1. ApplicationMaster asks (priority 0) go first, in submit order, while they fit (Sec. 3.4.3).
   A request carries no AM flag, so (approx.) other containers asked for at priority 0, as
   distributed shell's, go first too.
2. ITA (Sec. 3.3, Alg. 1 in ita.py) while a batch meets an idle cluster: if S_j held nothing
   when it heartbeated and no job has finished a map yet, AssignTask(j, T) fills it. Alg. 1's
   loop over the m servers thus runs one server per heartbeat; a node that drains later is
   refilled by RTA, which knows the jobs' progress. When the DP's grid cells x distinct task
   sizes exceed `ita_max_work`, RTA fills the node instead. Identical empty nodes met one after
   the other reuse the DP's result (cached in ita.py).
3. Otherwise RTA (Sec. 3.4): score every request that fits the residual capacity by fitness F
   (Eq. 1, `ffd_dp.fitness`) and urgency U (Eq. 2-3, urgency.py, which also says how their
   terms are read from a snapshot), add the min-max normalised scores (Eq. 4), place one
   container of the best, and repeat until nothing fits. Urgency counts the containers placed
   earlier in the same heartbeat, as the RM's app state would. Ties go to the better locality
   on S_j (node, rack, off-switch: the paper's "best locality"), then submit time, app id and
   priority. Scoring every request costs O(A + k n) a heartbeat: A apps read for the urgency
   inputs, n (app, priority) asks scored for each of the k containers placed (the paper's
   O(n log n) sorts once; placing several containers needs the scores again because F and the
   min-max range change with the residual). So HaSTE reads the same picks from requests kept
   in urgency order (urgency_lists.py, `ranked_assignment`): a heartbeat reads the ends of each
   (size, alignment) group's list and re-lists only the jobs touched since the last one. It
   scores every request as above on a snapshot no store stamped (a view: the engine passes one
   while an AM or queue limit holds asks back), while a pending ask names a node or rack or
   forbids relaxing locality, in ITA's case, and when urgency is weighted below 0.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from yarnctl.model import AM_PRIORITY, ANY, App, Assignment, ClusterSnapshot, Decision, Node, NodeId, Ask, Resources
from yarnctl.policies.ffd_dp import FfdDpConfig, check_weights, fitness
from yarnctl.policies.ita import grid_work, initial_assignment
from yarnctl.policies.urgency import JobProgress, Progress, weighted_size
from yarnctl.policies.urgency_lists import Group, Iterations, Key, UrgencyLists
from yarnctl.policies.contract import PolicyBase
from yarnctl.policies.bounds import bounded

Beta = tuple[float, float, float]  # weights of the normalised fitness, urgency and alignment (Eq. 6)
Places = list[tuple[App, list[tuple[Ask, int]]]]  # pending apps in submit order, each with `placeable`


@dataclass(frozen=True, slots=True)
class HasteConfig:
    """Resource weights w_p of Eq. 1 and Alg. 1 (memory counted in GB) and the bound on Alg. 1's work."""

    memory_weight: float = bounded(1.0, 0)
    vcores_weight: float = bounded(1.0, 0)
    ita_max_work: int = bounded(20_000, 1)  # Alg. 1 grid cells x distinct task sizes (about 0.8 ms cold there, bench.py)


@dataclass(slots=True)
class TaskAsk:
    """One (app, priority) request for map or reduce tasks, as one heartbeat scores it."""

    app_id: str
    priority: int
    capability: Resources
    left: int
    size: float  # R_i of one task (urgency.weighted_size)
    job: JobProgress
    urgency: float  # job.urgency(priority, size) once RTA runs, kept current as the heartbeat places tasks
    order: tuple[int, float, str, int]  # tie-break: locality rank on the node, submit time, app id, priority
    alignment: float = 0.0  # Eq. 5 (HaSTE-A)
    alignment_numerator: int = 0  # I_i + I_i^current, when read from the urgency lists


def normalised(xs: Sequence[float]) -> list[float]:
    """Min-max normalisation as in Eq. 4: (x - min) / (max - min), all 0 when every x is equal."""
    lo, hi = min(xs), max(xs)
    return [(x - lo) / (hi - lo) for x in xs] if hi > lo else [0.0] * len(xs)


def preferences(asks: Sequence[TaskAsk], residual: Resources, w: FfdDpConfig,
                beta: Beta) -> list[tuple[float, TaskAsk]]:
    """Eq. 4 (Eq. 6 with `beta`): the preference of every request with a task that fits `residual`."""
    fitting = [r for r in asks if r.left > 0 and r.capability.fits_in(residual)]
    if not fitting:
        return []
    f = normalised([fitness(r.capability, residual, w) for r in fitting])
    u = normalised([r.urgency for r in fitting])
    a = normalised([r.alignment for r in fitting])
    b1, b2, b3 = beta
    return [(b1 * fi + b2 * ui + b3 * ai, r) for fi, ui, ai, r in zip(f, u, a, fitting)]


def real_time_assignment(asks: Sequence[TaskAsk], residual: Resources, w: FfdDpConfig,
                         beta: Beta) -> Iterator[tuple[TaskAsk, str]]:
    """RTA (Sec. 3.4.3): place the most preferred task that fits, one at a time, until none fits.

    Yields each pick with why: its raw fitness (Eq. 1), urgency (Eq. 2-3), alignment when weighted
    (Eq. 5) and preference (Eq. 4/6), for the decision log.
    """
    own: set[int] = set()  # ids of the progress copies this heartbeat made (kept alive by `asks`)
    while scored := preferences(asks, residual, w, beta):
        top = max(p for p, _ in scored)
        best = min((r for p, r in scored if p == top), key=attrgetter("order"))
        why = (f"RTA p{best.priority}: fitness {fitness(best.capability, residual, w):.1f}, "
               f"urgency {best.urgency:.3g}" + (f", alignment {best.alignment:.3g}" if beta[2] else "")
               + f", preference {top:.2f} of {len(scored)}")
        best.left -= 1
        if id(best.job) not in own:  # the progress read is shared across heartbeats: start tasks on a copy
            shared, mine = best.job, best.job.copy()
            for r in asks:
                if r.job is shared:
                    r.job = mine
            own.add(id(mine))
        best.job.start(best.priority, best.size)
        for r in asks:
            if r.job is best.job:  # a placed task changes the urgency of its own job only
                r.urgency = r.job.urgency(r.priority, r.size)
        residual = residual - best.capability
        yield best, why


class _Scored(NamedTuple):
    """One list's part in a round of RTA: what Eq. 6 needs of it."""

    group: Group
    fitness: float  # F of its task size on the residual (Eq. 1)
    alignment: float  # A of its jobs (Eq. 5; 0 unweighted)
    most: float  # the highest and lowest U among its requests with a task left
    least: float
    left: int  # its requests with a task left
    mine: list[TaskAsk]  # those of jobs placed in this heartbeat, scored one by one


def ranked_assignment(lists: UrgencyLists, residual: Resources, w: FfdDpConfig,
                      beta: Beta) -> Iterator[tuple[TaskAsk, str]]:
    """RTA as `real_time_assignment` places (same picks, same reasons), read from the urgency lists.

    F and A are one value per list (a task size, an alignment numerator) and, with `beta[1]` at
    least 0, the preference never falls as U grows within a list: its tied-best requests are a
    prefix of it (runs of equal U), so only list heads and tails are scored. A job placed in this
    heartbeat leaves the lists for the rest of it: its requests are then scored one by one, with
    the urgency its new tasks give it.
    """
    b1, b2, b3 = beta
    own: dict[str, list[TaskAsk]] = {}  # jobs placed in this heartbeat: their requests, as they now stand
    out: dict[Group, int] = {}  # keys of those jobs' requests each list still holds
    while True:
        scored: list[_Scored] = []
        for group, keys in lists.lists.items():
            size = group[0]
            if not size.fits_in(residual):
                continue
            mine = [r for rs in own.values() for r in rs if r.capability == size and r.alignment_numerator == group[1]
                    and r.left > 0]
            us = [r.urgency for r in mine]
            for i in (_next_listed(keys, 0, own, 1), _next_listed(keys, len(keys) - 1, own, -1)):
                if i is not None:
                    us.append(-keys[i][0])
            if us:
                scored.append(_Scored(group, fitness(size, residual, w), _alignment(lists, group[1]), max(us), min(us),
                                      len(keys) - out.get(group, 0) + len(mine), mine))
        if not scored:
            return
        f_lo, f_hi = min(g.fitness for g in scored), max(g.fitness for g in scored)
        a_lo, a_hi = min(g.alignment for g in scored), max(g.alignment for g in scored)
        u_lo, u_hi = min(g.least for g in scored), max(g.most for g in scored)

        def preference(g: _Scored, u: float) -> float:
            # Eq. 6 as `preferences` computes it, term by term
            fi = (g.fitness - f_lo) / (f_hi - f_lo) if f_hi > f_lo else 0.0
            ui = (u - u_lo) / (u_hi - u_lo) if u_hi > u_lo else 0.0
            ai = (g.alignment - a_lo) / (a_hi - a_lo) if a_hi > a_lo else 0.0
            return b1 * fi + b2 * ui + b3 * ai

        top = max(preference(g, g.most) for g in scored)
        best: TaskAsk | Key | None = None
        for g in scored:
            if preference(g, g.most) != top:
                continue
            for r in g.mine:
                if preference(g, r.urgency) == top and (best is None or r.order[1:] < _order(best)):
                    best = r
            keys = lists.lists[g.group]
            i = _next_listed(keys, 0, own, 1)
            while i is not None and preference(g, -keys[i][0]) == top:  # the ties: a run of equal urgency each
                if best is None or keys[i][1:] < _order(best):
                    best = keys[i]
                i = _next_listed(keys, bisect.bisect_right(keys, keys[i][0], key=itemgetter(0)), own, 1)
        assert best is not None  # some list scored `top`
        if not isinstance(best, TaskAsk):
            best = _take(lists, best, own, out)
        why = (f"RTA p{best.priority}: fitness {fitness(best.capability, residual, w):.1f}, "
               f"urgency {best.urgency:.3g}" + (f", alignment {best.alignment:.3g}" if b3 else "")
               + f", preference {top:.2f} of {sum(g.left for g in scored)}")
        best.left -= 1
        best.job.start(best.priority, best.size)
        for r in own[best.app_id]:  # a placed task changes the urgency of its own job only
            r.urgency = r.job.urgency(r.priority, r.size)
        residual = residual - best.capability
        yield best, why


def _next_listed(keys: list[Key], i: int, own: Mapping[str, object], step: int) -> int | None:
    """The first index from `i` on (in `step`'s direction) whose job has not left the lists, or None."""
    while 0 <= i < len(keys):
        if keys[i][2] not in own:
            return i
        i += step
    return None


def _alignment(lists: UrgencyLists, numerator: int) -> float:
    """Eq. 5 for a job with I_i + I_i^current = `numerator`, as `alignment.alignments` computes it (0 unweighted)."""
    return numerator / lists.total if lists.iterations is not None else 0.0


def _order(r: TaskAsk | Key) -> tuple[float, str, int]:
    """The tie-break after locality (the same on every node for listed requests): submit time, app id, priority."""
    return (r.order[1], r.order[2], r.order[3]) if isinstance(r, TaskAsk) else (r[1], r[2], r[3])


def _take(lists: UrgencyLists, key: Key, own: dict[str, list[TaskAsk]], out: dict[Group, int]) -> TaskAsk:
    """Take the job of the listed request `key` out of the lists for this heartbeat; return that request."""
    app_id, job = key[2], lists.jobs[key[2]].copy()  # the progress read is shared across heartbeats
    asks = own[app_id] = []
    for row in lists.rows[app_id]:
        r = row.ask
        asks.append(TaskAsk(app_id, r.priority, r.capability, r.count, row.size, job, -row.key[0],
                            (2, row.key[1], app_id, r.priority), _alignment(lists, row.group[1]), row.group[1]))
        out[row.group] = out.get(row.group, 0) + 1
    return next(r for r in asks if r.priority == key[3])


def placeable(asks: Sequence[Ask], node: Node) -> list[tuple[Ask, int]]:
    """Each priority's off-switch request that may run on `node`, with its locality there (0 node, 1 rack, 2 any).

    `asks` is one app's; YARN keeps an off-switch (ANY) ask beside any node or rack ones.
    """
    named = [q for q in asks if q.resource_name != ANY and q.count > 0]
    host = node.id.rpartition(":")[0] or node.id  # live node ids are host:port, asks name the host
    out = []
    for r in asks:
        if r.resource_name != ANY:
            continue
        names = {q.resource_name for q in named if q.priority == r.priority} if named else ()
        rank = 0 if node.id in names or host in names else 1 if node.rack in names else 2
        if rank < 2 or r.relax_locality:
            out.append((r, rank))
    return out


def _summary(texts: list[str]) -> str:
    """One app's reasons in a heartbeat: the first pick in full, then how many more followed."""
    return texts[0] + (f" (+{len(texts) - 1} more)" if len(texts) > 1 else "")


class Haste(PolicyBase):
    """HaSTE: AMs first, the first batch packed by ITA's DP, then the fittest, most urgent tasks (RTA)."""

    name = "haste"
    Config = HasteConfig
    beta: Beta = (1.0, 1.0, 0.0)  # Eq. 4 is Eq. 6 without alignment
    # what the lists read of a job for Eq. 5 (HaSTE-A's): the same reading `alignments` makes, kept in step with it
    iterations: Iterations | None = None

    def __init__(self, config: HasteConfig = HasteConfig()) -> None:
        self.config = config
        check_weights(config.memory_weight, config.vcores_weight, self.name)
        self.weights = FfdDpConfig(config.memory_weight, config.vcores_weight)
        self.progress = Progress(self.weights)  # the policy's only state: the T_i^m seen (urgency.py)
        self.lists = UrgencyLists(self.progress, self.iterations)  # what RTA scores, in its order (urgency_lists.py)

    def decide(self, snap: ClusterSnapshot, node_id: NodeId) -> Decision:
        """AM asks first, then ITA on an empty node of an idle cluster, else RTA, until nothing fits."""
        node = snap.nodes[node_id]
        granted: dict[tuple[str, int], int] = {}
        why: dict[str, list[str]] = {}
        if self.beta[1] >= 0 and self.lists.sync(snap) and (
                self.lists.finished or not node.allocated.is_zero()):  # not ITA's case
            residual = self._serve_listed_ams(node.available, granted)
            why.update((app, ["AM first"]) for app, _ in granted)
            if snap.min_allocation.fits_in(residual):
                for r, text in ranked_assignment(self.lists, residual, self.weights, self.beta):
                    granted[(r.app_id, r.priority)] = granted.get((r.app_id, r.priority), 0) + 1
                    why.setdefault(r.app_id, []).append(text)
            return self._decision(node_id, granted, why)
        # read at every heartbeat, as the lists do: T_i^m is the most maps seen over the snapshots read
        jobs = self.progress.read(snap)
        places = [(app, placeable(snap.asks[app.id], node)) for app in snap.iter_pending_apps()]
        residual = self._serve_ams(places, residual=node.available, granted=granted)
        why.update((app, ["AM first"]) for app, _ in granted)
        if snap.min_allocation.fits_in(residual):
            asks = self._task_asks(snap, places, residual, jobs)
            idle = node.allocated.is_zero() and not any(j.maps_finished() for j in jobs.values())
            initial = self._initial(asks, residual, snap.min_allocation) if idle else None
            if initial is None:
                for r in asks:  # only RTA weighs urgency
                    r.urgency = r.job.urgency(r.priority, r.size)
            plan = [(r, n, f"ITA p{r.priority}: {n} of the batch packed by Alg. 1") for r, n in initial] \
                if initial is not None else \
                [(r, 1, text) for r, text in real_time_assignment(asks, residual, self.weights, self.beta)]
            for r, n, text in plan:
                granted[(r.app_id, r.priority)] = granted.get((r.app_id, r.priority), 0) + n
                why.setdefault(r.app_id, []).append(text)
        return self._decision(node_id, granted, why)

    @staticmethod
    def _decision(node_id: NodeId, granted: Mapping[tuple[str, int], int], why: Mapping[str, list[str]]) -> Decision:
        """The containers granted on `node_id`, with each app's reasons."""
        if not granted:
            return Decision()
        return Decision(tuple(Assignment(a, p, node_id, n) for (a, p), n in granted.items()),
                        reasons={app: _summary(texts) for app, texts in why.items()})

    def alignments(self, snap: ClusterSnapshot) -> Mapping[str, float]:
        """Alignment per app (Eq. 5); HaSTE has none."""
        return {}

    def save_state(self) -> dict[str, Any]:
        """The T_i^m seen so far, so a restarted policy server keeps the map progress of running jobs."""
        return self.progress.save()

    def load_state(self, doc: Mapping[str, Any]) -> None:
        """Take back what save_state returned."""
        self.progress.load(doc)

    def _serve_ams(self, places: Places, residual: Resources, granted: dict[tuple[str, int], int]) -> Resources:
        """Place AM containers in submit order while they fit; return what is left of `residual`."""
        for app, fitting in places:
            for r, _ in fitting[:1]:  # the AM's is the first priority
                n = min(r.count, r.capability.times_fit(residual)) if r.priority == AM_PRIORITY else 0
                if n > 0:
                    granted[(app.id, AM_PRIORITY)] = n
                    residual = residual - r.capability * n
        return residual

    def _serve_listed_ams(self, residual: Resources, granted: dict[tuple[str, int], int]) -> Resources:
        """`_serve_ams` over the listed AM asks, stopping once none has a container that fits."""
        lists = self.lists
        for _, r in lists.ams:
            if not lists.fitting_ams(residual):
                break
            n = min(r.count, r.capability.times_fit(residual))
            if n > 0:
                granted[(r.app_id, AM_PRIORITY)] = n
                residual = residual - r.capability * n
        return residual

    def _task_asks(self, snap: ClusterSnapshot, places: Places, residual: Resources,
                       jobs: Mapping[str, JobProgress]) -> list[TaskAsk]:
        """Every map or reduce request in `places` that fits `residual`, with its job's urgency inputs (urgency 0)."""
        aligned = self.alignments(snap)
        out = []
        for app, fitting in places:
            for r, rank in fitting:
                if r.priority != AM_PRIORITY and r.capability.fits_in(residual):
                    out.append(TaskAsk(app.id, r.priority, r.capability, r.count,
                                           weighted_size(r.capability, self.weights), jobs[app.id], 0.0,
                                           (rank, app.submit_s, app.id, r.priority), aligned.get(app.id, 0.0)))
        return out

    def _initial(self, asks: Sequence[TaskAsk], residual: Resources,
                 unit: Resources) -> list[tuple[TaskAsk, int]] | None:
        """ITA's plan for this node (tasks of one size go to asks in tie-break order); None above the work bound."""
        ordered = sorted(asks, key=attrgetter("order"))
        pending: dict[Resources, list[int]] = {}  # tasks pending per size, sizes in the order Alg. 1 tries them
        for r in ordered:
            if (left := pending.get(r.capability)) is None:
                pending[r.capability] = [r.left]
            else:
                left[0] += r.left
        if grid_work(len(pending), residual, unit) > self.config.ita_max_work:
            return None
        counts = initial_assignment([(size, n) for size, (n,) in pending.items()], residual, unit,
                                    partial(weighted_size, w=self.weights))
        wanted = {size: n for size, n in zip(pending, counts) if n}
        plan = []
        for r in ordered if wanted else ():
            n = min(r.left, wanted.get(r.capability, 0))
            if n > 0:
                wanted[r.capability] -= n
                plan.append((r, n))
        return plan
