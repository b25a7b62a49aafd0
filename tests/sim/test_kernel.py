"""The event kernel: time order, priority order at equal times, insertion order (or rank) last."""

from yarnctl.sim.kernel import AM, AM_BEAT, END, HEARTBEAT, SUBMIT, TUNE, Kernel, SeededKernel


def test_events_run_in_time_then_priority_then_insertion_order():
    k, seen = Kernel(), []
    k.schedule(2.0, SUBMIT, seen.append, "late")
    k.schedule(1.0, HEARTBEAT, seen.append, "hb")
    k.schedule(1.0, END, seen.append, "end-1")
    k.schedule(1.0, END, seen.append, "end-2")
    k.schedule(1.0, SUBMIT, seen.append, "submit")
    k.run()
    assert seen == ["submit", "end-1", "end-2", "hb", "late"]
    assert k.now == 2.0


def test_run_until_and_stop():
    k, seen = Kernel(), []
    for t in (1, 2, 3):
        k.schedule(t, END, seen.append, t)
    k.run(until=2.5)
    assert seen == [1, 2] and k.now == 2.5
    k.schedule(3.5, END, k.stop)
    k.schedule(4.0, END, seen.append, 4)
    k.run()
    assert seen == [1, 2, 3] and k.now == 3.5


def test_events_in_the_past_run_now():
    k, seen = Kernel(), []
    k.schedule(5.0, END, lambda: k.schedule(1.0, END, seen.append, k.now))
    k.run()
    assert seen == [5.0]


def test_ranked_events_at_one_instant_run_by_rank_whenever_they_were_scheduled():
    k, seen = Kernel(), []
    k.schedule_ranked(1.0, AM_BEAT, 7, seen.append, "job-7")
    k.schedule(1.0, TUNE, seen.append, "tune")
    k.schedule_ranked(1.0, AM_BEAT, 2, seen.append, "job-2")
    k.schedule(1.0, AM, seen.append, "am")
    # a job that slept and woke at 0.5 takes its place by rank, not after those scheduled before it
    k.schedule(0.5, END, lambda: k.schedule_ranked(1.0, AM_BEAT, 5, seen.append, "job-5"))
    k.run()
    assert seen == ["am", "job-2", "job-5", "job-7", "tune"]


def test_stage_is_the_latest_priority_run_at_the_instant():
    k, seen = Kernel(), []
    k.schedule(1.0, END, lambda: seen.append(k.stage))
    k.schedule(1.0, HEARTBEAT, lambda: (seen.append(k.stage), k.schedule(1.0, SUBMIT, lambda: seen.append(k.stage))))
    k.schedule(2.0, AM, lambda: seen.append(k.stage))
    k.run()
    # the submit scheduled for now comes after the heartbeat had its turn: the stage stays the heartbeat's
    assert seen == [END, HEARTBEAT, HEARTBEAT, AM]


def test_stopping_at_an_instant_keeps_what_ran_there():
    k = Kernel()
    k.schedule(1.0, HEARTBEAT, lambda: None)
    k.schedule(2.0, END, lambda: None)
    k.run(until=1.0)
    assert (k.now, k.stage) == (1.0, HEARTBEAT)  # the heartbeat at 1.0 ran: a wake now comes after it
    k.run(until=1.5)
    assert (k.now, k.stage) == (1.5, -1)


def _order(seed: int | None) -> list[str]:
    k, seen = Kernel() if seed is None else SeededKernel(seed), []
    k.schedule(1.0, HEARTBEAT, seen.append, "hb")
    for i in range(8):
        k.schedule(1.0, END, seen.append, f"end-{i}")
    k.schedule(1.0, SUBMIT, seen.append, "submit")
    k.schedule(2.0, SUBMIT, seen.append, "late")
    k.run()
    return seen


def test_an_order_seed_draws_the_order_of_simultaneous_events_of_one_priority_only():
    ends = [f"end-{i}" for i in range(8)]
    assert _order(None) == ["submit", *ends, "hb", "late"]
    drawn = {seed: _order(seed) for seed in range(1, 6)}
    for seen in drawn.values():
        assert seen[0] == "submit" and seen[-2:] == ["hb", "late"] and sorted(seen[1:9]) == ends
    assert any(seen[1:9] != ends for seen in drawn.values())  # 8! orders: five seeds do not all keep insertion's
    assert len({tuple(seen) for seen in drawn.values()}) > 1
    assert _order(3) == drawn[3]  # the same seed, the same order


def test_a_drawn_rank_keeps_its_place_when_it_comes_back():
    def beats(seed: int, sleeper_wakes: bool) -> list[str]:
        k, seen = SeededKernel(seed), []
        for rank in range(6):
            if rank == 3 and sleeper_wakes:  # slept, and is woken at 0.5 for the same instant
                k.schedule(0.5, END, lambda: k.schedule_ranked(1.0, AM_BEAT, 3, seen.append, "job-3"))
            else:
                k.schedule_ranked(1.0, AM_BEAT, rank, seen.append, f"job-{rank}")
        k.run()
        return seen

    orders = [beats(seed, False) for seed in range(1, 6)]
    assert any(seen != [f"job-{r}" for r in range(6)] for seen in orders)
    for seed, seen in zip(range(1, 6), orders):
        assert beats(seed, True) == seen
