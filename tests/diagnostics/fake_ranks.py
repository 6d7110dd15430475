"""One rank of a small data-parallel loop with a fake collective (files in a shared folder,
no torch): ``python fake_ranks.py SHARED OUT`` with RANK, WORLD_SIZE and STUCK_RANK set.

Each step: input, compute, then ``all_reduce`` waits until every rank has written its file
for the step. At step 12 the STUCK_RANK blocks in ``slow_storage_read`` (its input phase);
the other ranks finish their phases and wait in ``all_reduce``, as ranks of a real job wait
in a collective for a rank that never reached it. The recorder (hang_after_s 0.3 s) writes a
hang snapshot in every rank; SIGTERM then writes a termination snapshot.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from workbench.recorder import Recorder

STUCK_AT = 12


def all_reduce(shared: Path, step: int, rank: int, world: int) -> None:
    (shared / f"step{step}-rank{rank}").write_text("")
    waiting = [shared / f"step{step}-rank{r}" for r in range(world)]
    while waiting:
        if waiting[-1].exists():
            waiting.pop()
        else:
            time.sleep(0.002)


def slow_storage_read() -> None:
    time.sleep(3600)  # never returns: the job is killed


def main() -> None:
    shared, out = Path(sys.argv[1]), Path(sys.argv[2])
    rank, world, stuck = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["STUCK_RANK"])
    all_reduce(shared, -1, rank, world)  # the ranks start together (processes start at different times)
    rec = Recorder(
        out_dir=out,
        label=f"fake ddp rank {rank}",
        dimensions={"model": "toy", "rank_count": world},
        hang_after_s=0.3,
        gpu_interval_s=None,
        stack_hz=None,
        host_interval_s=None,
    )
    for step in range(STUCK_AT + 1):
        with rec.step():
            with rec.phase("input"):
                if step == STUCK_AT and rank == stuck:
                    slow_storage_read()
            with rec.phase("compute"):
                time.sleep(0.001)
            with rec.phase("allreduce"):
                all_reduce(shared, step, rank, world)
    print("done", flush=True)


if __name__ == "__main__":
    main()
