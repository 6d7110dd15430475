"""A training loop under the recorder that runs until it is stopped (tests start it in a
subprocess, then signal it or ask it for a snapshot).

    python running_loop.py OUT_DIR [--app-handler] [--recorder-in-thread]

Prints "ready" once 20 steps are done. ``--app-handler`` installs an application's SIGTERM
and SIGINT handler first (it writes OUT_DIR/app-handler-<signal> and exits with status 7).
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path

from workbench.recorder import Recorder


def main() -> None:
    out = Path(sys.argv[1])
    if "--app-handler" in sys.argv:

        def app_handler(signum: int, frame: object) -> None:
            (out / f"app-handler-{signal.Signals(signum).name}").write_text("called")
            sys.exit(7)

        signal.signal(signal.SIGTERM, app_handler)
        signal.signal(signal.SIGINT, app_handler)
    fields = {"out_dir": out, "gpu_interval_s": None, "stack_hz": None}
    if "--recorder-in-thread" in sys.argv:
        made: list[Recorder] = []
        maker = threading.Thread(target=lambda: made.append(Recorder(**fields)))
        maker.start()
        maker.join()
        rec = made[0]
        print(rec.stats()["signals"], flush=True)
    else:
        rec = Recorder(**fields)
    train_until_stopped(rec)


def train_until_stopped(rec: Recorder) -> None:
    step = 0
    while True:
        with rec.step():
            with rec.phase("input"):
                time.sleep(0.002)
            with rec.phase("compute"):
                time.sleep(0.003)
        step += 1
        if step == 20:
            print("ready", flush=True)


if __name__ == "__main__":
    main()
