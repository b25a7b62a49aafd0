"""The concrete workload a simulation runs: cluster, jobs, stages, tasks with their durations and usage."""

from __future__ import annotations

from dataclasses import dataclass

from yarnctl.sim.mr_am import MRAMConfig
from yarnctl.sim.spark_am import SparkConfig
from yarnctl.model import Queue, Resources

DEFAULT_AM = Resources(1536, 1)  # yarn.app.mapreduce.am.resource.mb / .cpu-vcores


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One simulated NodeManager."""

    id: str
    rack: str
    capacity: Resources
    physical: Resources


@dataclass(frozen=True, slots=True)
class Startup:
    """What starting a container costs before its work begins (0 unless a workload says: the papers do not).

    Measured on a real cluster by a fidelity run; a task's JVM start-up is CPU work on its node, so it
    also slows down with every other container starting there (`launch_per_concurrent_s` adds what
    the CPU model does not capture).
    """

    am_s: float = 0.0  # from an AM's JVM start (its launch cost paid) to its first ask: MRAppMaster init, job set-up
    launch_s: float = 0.0  # a container's launch and JVM start-up, before its own work (an AM's too)
    launch_per_concurrent_s: float = 0.0  # more for each other container still starting on the node (machine)
    # JVM start-up as CPU work (yarnctl/sim/jvmstart.py): CPU-seconds each start needs, the cores the
    # starts of one pool share, and whether the pool is the whole cluster (NodeManagers on one machine;
    # then the containers still starting that `launch_per_concurrent_s` counts are the whole cluster's too)
    launch_cpu_s: float = 0.0
    launch_cores: float = 0.0
    launch_shared: bool = False
    # the other CPU work of a job's start on the same cores: its AM's own start-up after its JVM's
    # (MRAppMaster init, job set-up; `am_s` follows it), and its client's submission on the machine
    am_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    # an AM takes up the task containers the RM allocates it at its next allocate call, as Hadoop 2.7's MR AM
    # does on its heartbeat (`yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms`): only then do they launch
    take_up: bool = False


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """The simulated cluster: its nodes, heartbeat interval, minimum allocation and start-up costs."""

    nodes: tuple[NodeSpec, ...]
    heartbeat_s: float = 1.0
    min_allocation: Resources = Resources(1024, 1)
    startup: Startup = Startup()
    queues: tuple[Queue, ...] = ()  # the scheduler's queue tree (cluster.queues; none: no tree, as FifoScheduler)
    # each node's heartbeat phase as a fraction of the interval (cluster.heartbeat_phases); none: node i of N at i/N
    phases: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class Usage:
    """Actual use as fractions of the request, piecewise constant: (at, cpu, memory) steps."""

    steps: tuple[tuple[float, float, float], ...] = ((0.0, 1.0, 1.0),)

    def at(self, fraction: float) -> tuple[float, float]:
        """The (cpu, memory) fractions in force at `fraction` of the task's nominal duration."""
        cpu, mem = self.steps[0][1], self.steps[0][2]
        for at, c, m in self.steps:
            if at <= fraction:
                cpu, mem = c, m
        return cpu, mem


FULL_USAGE = Usage()


@dataclass(frozen=True, slots=True)
class StageSpec:
    """A set of identical tasks requested together at one priority."""

    name: str
    kind: str  # map | reduce | executor | task | spark (tasks run inside the job's executors)
    priority: int
    resource: Resources
    durations: tuple[float, ...]
    usage: Usage = FULL_USAGE
    after: int | None = None  # index of the stage this one follows
    slowstart: float = 1.0
    # seconds to fetch all of the followed stage's output (a reduce's shuffle); a task that starts early
    # fetches while that stage runs, so once it ends only the last output is left (1/tasks of this)
    shuffle_s: float = 0.0
    # tasks of this stage that finished before the simulation started (a live job's, `yarnctl whatif`): the MR
    # AM counts them in its slow start and reduce ramp-up
    done_before: int = 0
    # the nodes holding its input (a map's split): each task asks for them and their racks besides ANY, as the
    # MR AM asks for a split's hosts, so a scheduler can place it node-local; none: any node (a SleepJob's)
    hosts: tuple[str, ...] = ()

    @property
    def tasks(self) -> int:
        """Number of tasks."""
        return len(self.durations)


@dataclass(frozen=True, slots=True)
class Placed:
    """A container already running when the simulation starts (a live cluster's, `yarnctl whatif`)."""

    node: str
    stage: int | None  # index of its task's stage, whose next duration is its work left; None: the job's AM


@dataclass(frozen=True, slots=True)
class JobSpec:
    """One application: its identity, AM and stages (iterations already expanded)."""

    id: str
    submit_s: float
    user: str
    queue: str
    type: str
    name: str
    tags: tuple[str, ...]
    am: Resources | None
    stages: tuple[StageSpec, ...]
    iterations: int = 1
    mapreduce: MRAMConfig = MRAMConfig()  # how its MR AM schedules reduces (map/reduce jobs only)
    # a Spark job with stages: its executors' properties; the stages (kind spark) run inside executors
    # of their resource, which the driver keeps (None: no Spark driver, e.g. the `executors`-only form)
    spark: SparkConfig | None = None
    # containers it holds when the simulation starts, on their nodes: its AM (started: it asks at once)
    # and running tasks, which are the first durations of their stages (their remaining work) and pay no
    # start-up cost; the stages' other durations are its tasks still to run
    placed: tuple[Placed, ...] = ()
    # the AM's work after its last task (job commit, history, unregister) before the job ends; 0 unless a
    # workload says (`yarnctl whatif` takes it from the job history)
    teardown_s: float = 0.0

    @property
    def tasks(self) -> int:
        """Number of (non-AM) tasks."""
        return sum(s.tasks for s in self.stages)


@dataclass(frozen=True, slots=True)
class Workload:
    """A cluster and the jobs submitted to it."""

    name: str
    description: str
    source: str
    cluster: ClusterSpec
    jobs: tuple[JobSpec, ...]
    seed: int = 0
    origin: str = ""

    @property
    def tasks(self) -> int:
        """Number of (non-AM) tasks in all jobs."""
        return sum(j.tasks for j in self.jobs)


# ---------------------------------------------------------------- field readers


def normalize(r: Resources, minimum: Resources) -> Resources:
    """SchedulerUtils.normalizeRequest: round each resource up to a multiple of the minimum."""
    mem = max(minimum.memory_mb, -(-r.memory_mb // minimum.memory_mb) * minimum.memory_mb) \
        if minimum.memory_mb else r.memory_mb
    vc = max(minimum.vcores, -(-r.vcores // minimum.vcores) * minimum.vcores) if minimum.vcores else r.vcores
    return Resources(mem, vc)

