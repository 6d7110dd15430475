"""Issues 16 and 28's hostile inputs at full size: each `wb` run's time and peak RSS beside the input size.

    .venv/bin/python bench/hostile.py [--only NAME] [--item 45] [--postgres URL] [--keep DIR]

Every input is written (streamed, sparse where it can be) into a scratch directory,
then `wb` runs on it in a subprocess whose address space is capped (``--cap``, 8 GiB by
default, so a regression fails instead of taking the machine down). The table has the
input, its size on disk, the peak RSS of the run (``wait4``), the exit code and the
first line of the message. The small variants of the same inputs are the tests in
tests/hardening/.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.hardening import inputs  # noqa: E402


def run_wb(args: list[str], cap: int, timeout: float = 300) -> tuple[int, str, float]:
    """(exit code, the message, seconds) of ``wb ARGS``."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1"}  # BLAS threads reserve address space
    env.pop("WB_DEBUG", None)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    start = time.perf_counter()
    # "@py CODE ARG": a reader called directly (the YAML reader has no command of its own).
    argv = (
        [sys.executable, "-c", args[1], *args[2:]]
        if args[:1] == ["@py"]
        else [sys.executable, "-m", "workbench", *args]
    )
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, preexec_fn=limit)
    try:
        _out, err = proc.communicate(timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
        return 124, f"(hung: killed after {timeout:.0f} s)", time.perf_counter() - start
    # communicate() reaped the child; its rusage is folded into RUSAGE_CHILDREN only as a
    # running max, so each case runs in its own helper process (see main).
    lines = [line for line in err.decode("utf-8", "replace").splitlines() if line.strip()]
    message = " | ".join(lines)
    return rc, message, time.perf_counter() - start


def _size(path: Path) -> str:
    if not path.exists() and not path.is_symlink():
        return "-"
    if path.is_symlink() and not path.resolve().is_file():
        return f"-> {os.readlink(path)}"
    if path.is_dir():
        return "directory"
    if not path.is_file():
        return "FIFO" if path.is_fifo() else "device"
    st = path.stat()
    text = _human(st.st_size)
    if st.st_blocks * 512 < st.st_size // 2:
        text += " (sparse)"
    return text


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return str(n)


Case = tuple[str, str, Callable[[], Path], Callable[[Path], list[str]]]
# A case with its anchor: a plain input of the same size (or the same store, without the fault).
Anchored = tuple[str, str, Callable[[], Path], Callable[[Path], list[str]], Callable[[], Path]]


def cases(d: Path, postgres: str | None) -> list[Case | Anchored]:
    """(item, name, write the input, wb arguments for it); inputs are written only when run."""
    store = f"sqlite:///{d / 'wb.sqlite'}"

    def imp(path: Path) -> list[str]:
        return ["--store", store, "import", str(path)]

    def fifo() -> Path:
        os.mkfifo(d / "fifo.json")
        return d / "fifo.json"

    def link(name: str, target: str) -> Path:
        (d / name).symlink_to(target)
        return d / name

    def folder() -> Path:
        (d / "folder").mkdir()
        inputs.native_capture(d / "folder" / "in.json", label="inside")
        (d / "folder" / "passwd").symlink_to("/etc/passwd")
        return d / "folder"

    ro = f"sqlite:///file:{d / 'ro.sqlite'}?mode=ro&uri=true"
    out: list[Case | Anchored] = [
        ("1", "native: 20,000 distinct sample keys", lambda: inputs.distinct_keys(d / "uk.json", 20_000), imp),
        ("2", "kineto: arrays nested 40,000 deep (80 KB)", lambda: inputs.kineto_deep(d / "deep80k.json", 40_000), imp),
        (
            "2",
            "kineto: arrays nested 100,000 deep (200 KB)",
            lambda: inputs.kineto_deep(d / "deep200k.json", 100_000),
            imp,
        ),
        (
            "3",
            "nsys: StringIds an endless recursive view",
            lambda: inputs.nsys_recursive_strings(d / "report.sqlite"),
            imp,
        ),
        ("4", "vLLM .json.gz: 268 M zeros", lambda: inputs.vllm_zeros(d / "vllm.json.gz", 268_000_000), imp),
        ("4", "native .json.gz: a 1 GB label", lambda: inputs.label_bomb(d / "label.json.gz", 1_000_000_000), imp),
        ("4", "native: a header, then 2 GB of NULs", lambda: inputs.sparse_nuls(d / "sparse.json", 2_000_000_000), imp),
        (
            "5",
            "diagnose: pickle, 4 M references to one dict (gz)",
            lambda: inputs.pickle_backrefs(d / "_dump_0", 4_000_000),
            lambda p: ["diagnose", str(p)],
        ),
        (
            "5",
            "evidence verify: 10.5 M tiny arrays",
            lambda: inputs.bundle_tiny_arrays(d / "bundle.json", 10_500_000),
            lambda p: ["evidence", "verify", str(p)],
        ),
        (
            "5",
            "bundle import: 10.5 M tiny arrays",
            lambda: inputs.bundle_tiny_arrays(d / "bundle.json", 10_500_000),
            lambda p: ["--store", store, "bundle", "import", str(p)],
        ),
        ("8", "native: 1e400 in a sample", lambda: inputs.infinity_sample(d / "inf.json"), imp),
        (
            "9",
            "native: arrays nested 100,000 deep in a sample",
            lambda: inputs.deep_sample(d / "deep_sample.json", 100_000),
            imp,
        ),
        ("9", "native: a 5,000-digit integer", lambda: inputs.long_integer(d / "digits.json", 5_000), imp),
        (
            "9",
            "bundle: a 5,000-digit integer",
            lambda: inputs.bundle_long_integer(d / "digits_bundle.json", 5_000),
            lambda p: ["evidence", "verify", str(p)],
        ),
        (
            "9",
            "dump (JSON): a 5,000-digit rank",
            lambda: inputs.dump_long_integer(d / "_dump_digits", 5_000),
            lambda p: ["diagnose", str(p)],
        ),
        (
            "9",
            "dump (JSON): nested 100,000 deep",
            lambda: inputs.dump_deep_json(d / "_dump_deep", 100_000),
            lambda p: ["diagnose", str(p)],
        ),
        ("9", "native: a lone surrogate in the label", lambda: inputs.lone_surrogate_label(d / "surrogate.json"), imp),
        (
            "9",
            "import into a read-only SQLite store",
            lambda: inputs.native_capture(d / "new.json", label="new"),
            lambda p: ["--store", ro, "import", str(p)],
        ),
        ("9", 'kineto: "traceEvents": {"a": 1}', lambda: inputs.kineto_events_object(d / "events_object.json"), imp),
        ("10", "a FIFO", fifo, imp),
        ("10", "a symlink to /dev/zero", lambda: link("zero.json", "/dev/zero"), imp),
        ("10", "/dev/urandom named directly", lambda: Path("/dev/urandom"), imp),
        ("11", 'OTLP: doubleValue "1e999"', lambda: inputs.otlp_span(d / "otlp.json", '{"doubleValue":"1e999"}'), imp),
        (
            "13",
            "directory import with a symlink to /etc/passwd",
            folder,
            lambda p: ["--store", store, "import", str(p)],
        ),
        *issue_28(d),
        *issue_45(d),
    ]
    if postgres:
        pg_ro = postgres + ("&" if "?" in postgres else "?") + "options=-c%20default_transaction_read_only%3Don"
        out.append(
            (
                "9",
                "import into a read-only PostgreSQL store",
                lambda: inputs.native_capture(d / "new_pg.json", label="new"),
                lambda p: ["--store", pg_ro, "import", str(p)],
            )
        )
    return out


YAML_READ = (
    "import sys\nfrom workbench.formats import safe_yaml\nfrom pathlib import Path\n"
    "try:\n    safe_yaml.load_file(Path(sys.argv[1]))\nexcept ValueError as e:\n    sys.exit(f'wb: error: "
    "{sys.argv[1]}: {e}')"
)


def issue_28(d: Path) -> list[Case]:
    """Issue 28's cases: ids, the one door, work budgets, option bounds, one-line faults."""
    store = f"sqlite:///{d / 'wb28.sqlite'}"
    two_runs = f"sqlite:///{d / 'two.sqlite'}"
    for i in range(2):  # the store the extension cases compare in
        subprocess.run(
            [
                sys.executable,
                "-m",
                "workbench",
                "--store",
                two_runs,
                "import",
                str(inputs.native_capture(d / f"two{i}.json", label=f"two{i}", ttft=1 + i)),
            ],
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            check=False,
        )

    def fifo(name: str) -> Callable[[], Path]:
        def make() -> Path:
            os.mkfifo(d / name)
            return d / name

        return make

    def imp(path: Path) -> list[str]:
        return ["--store", store, "import", str(path)]

    def sparse() -> Path:
        path = d / "sparse200g.json"
        with open(path, "wb") as f:
            f.write(inputs.NATIVE_HEAD.encode() + b'"samples":[')
            f.truncate(200 * 10**9)
        return path

    def kmsg_folder() -> Path:
        (d / "kmsg").mkdir()
        inputs.native_capture(d / "kmsg" / "c.json", label="kmsg")
        (d / "kmsg" / "wb.toml").symlink_to("/proc/kmsg")
        return d / "kmsg"

    def nsys(name: str, **kw: object) -> Callable[[], Path]:
        def make() -> Path:
            (d / name).mkdir()
            return inputs.nsys_export(d / name / "report.sqlite", **kw)  # type: ignore[arg-type]

        return make

    def sacct(text: str) -> Callable[[], Path]:
        def make() -> Path:
            path = d / f"sacct{abs(hash(text)) % 10**6}.txt"
            path.write_text(text)
            return path

        return make

    sacct_ok = "JobID|State|Submit|Eligible|Start|End|ReqTRES\n7|COMPLETED|1790000000|1790000100|1790000200|1790000300|gres/gpu:a100=4\n"
    nothing = lambda: d / "-"  # noqa: E731 - the case needs no input file
    plan = ["--store", store, "rerun", "plan", "p28", "--lens", "training", "--baseline", "true", "--candidate", "true"]
    return [
        (
            "28.2",
            "show 99999999999999999999999",
            nothing,
            lambda _p: ["--store", two_runs, "show", "99999999999999999999999"],
        ),
        ("28.2", "show ² (a label, not run 2)", nothing, lambda _p: ["--store", two_runs, "show", "²"]),
        (
            "28.4",
            "compare --extension FIFO",
            fifo("ext.fifo"),
            lambda p: ["--store", two_runs, "compare", "1", "--vs", "2", "--extension", str(p)],
        ),
        (
            "28.4",
            "compare --extension /dev/zero",
            lambda: Path("/dev/zero"),
            lambda p: ["--store", two_runs, "compare", "1", "--vs", "2", "--extension", str(p)],
        ),
        (
            "28.4",
            "import --dims-file FIFO",
            fifo("dims.fifo"),
            lambda p: ["--store", store, "import", str(d / "two0.json"), "--dims-file", str(p)],
        ),
        (
            "28.4",
            "import --dims-file /dev/zero",
            lambda: Path("/dev/zero"),
            lambda p: ["--store", store, "import", str(d / "two0.json"), "--dims-file", str(p)],
        ),
        (
            "28.4",
            "rerun plan --from-file FIFO",
            fifo("plan.fifo"),
            lambda p: ["--store", store, "rerun", "plan", "--from-file", str(p)],
        ),
        (
            "28.4",
            "rerun plan --from-file /dev/zero",
            lambda: Path("/dev/zero"),
            lambda p: ["--store", store, "rerun", "plan", "--from-file", str(p)],
        ),
        ("28.4", "evidence verify FIFO", fifo("verify.fifo"), lambda p: ["evidence", "verify", str(p)]),
        ("28.4", "bundle import FIFO", fifo("bundle.fifo"), lambda p: ["--store", store, "bundle", "import", str(p)]),
        ("28.4", "import DIR with wb.toml -> /proc/kmsg", kmsg_folder, imp),
        ("28.4", "native: a 200 GB hole (sparse)", sparse, imp),
        (
            "28.5",
            "dump (pickle): tuple key 2M deep (2 KB gz)",
            lambda: inputs.pickle_deep_tuple_key(d / "_dump_deep28", 2_000_000),
            lambda p: ["diagnose", str(p)],
        ),
        (
            "28.5",
            "dump (pickle): 150k alike-hashing pg_status keys",
            lambda: inputs.pickle_alike_keys(d / "_dump_alike", 150_000),
            lambda p: ["diagnose", str(p)],
        ),
        (
            "28.5",
            "dump (pickle): 6,000 refs to one 1 MiB string",
            lambda: inputs.pickle_string_backrefs(d / "_dump_str", 6_000),
            lambda p: ["diagnose", str(p)],
        ),
        (
            "28.5",
            "YAML: 100k alike-hashing keys (3 MB)",
            lambda: inputs.yaml_alike_keys(d / "cm.yaml", 100_000),
            lambda p: ["@py", YAML_READ, str(p)],
        ),
        (
            "28.5",
            "nsys: StringIds.value = hex(zeroblob(1e9))",
            nsys("gen_hex", string_value="hex(zeroblob(n))", strings=[(5, 10**9)]),
            imp,
        ),
        (
            "28.5",
            "nsys: StringIds.value = printf('%.*c', 9e8)",
            nsys("gen_printf", string_value="printf('%.*c', n, 'x')", strings=[(5, 900_000_000)]),
            imp,
        ),
        ("28.5", "rerun plan --rounds 1000000000", nothing, lambda _p: [*plan, "--rounds", "1000000000"]),
        ("28.5", "rerun plan --rounds 1e20 (digits)", nothing, lambda _p: [*plan, "--rounds", "100000000000000000000"]),
        ("28.5", "rerun plan --timeout 1e400", nothing, lambda _p: [*plan, "--timeout", "1e400"]),
        (
            "28.5",
            "rerun plan --seed 99999999999999999999999",
            nothing,
            lambda _p: [*plan, "--seed", "99999999999999999999999"],
        ),
        ("28.6", "nsys: kernel -2^63 .. 2^63-1", nsys("wrap", kernels=[(-(1 << 63), (1 << 63) - 1)]), imp),
        ("28.6", "sacct --wait-target -5", sacct(sacct_ok), lambda p: [*imp(p), "--wait-target=-5"]),
        (
            "28.6",
            "import into sqlite:// (in memory)",
            lambda: d / "two0.json",
            lambda p: ["--store", "sqlite://", "import", str(p)],
        ),
        (
            "28.6",
            "native: pool.wait_target_s = 0",
            lambda: _write(
                d / "wait0.json",
                json.dumps(
                    {
                        "format": "workbench.capture/1",
                        "lens": "fleet",
                        "label": "w",
                        "pool": {"capacity_gpus": 8, "wait_target_s": 0},
                        "samples": [
                            {
                                "job": "7",
                                "gpus": 4,
                                "submit": 1790000000,
                                "eligible": 1790000100,
                                "start": 1790000200,
                                "end": 1790000300,
                                "state": "COMPLETED",
                            }
                        ],
                    }
                ),
            ),
            imp,
        ),
        ("28.9", "rerun plan --rounds 1e9 (Click's parse)", nothing, lambda _p: [*plan, "--rounds", "1e9"]),
        (
            "28.9",
            "stats --seed abc (Click's parse)",
            nothing,
            lambda _p: ["--store", two_runs, "stats", "--seed", "abc"],
        ),
        (
            "28.9",
            "show --json --nosuch (Click's parse)",
            nothing,
            lambda _p: ["--store", two_runs, "show", "--json", "--nosuch"],
        ),
        ("28.9", "nsys: start 'abc'", nsys("abc", kernels=[("abc", 2)]), imp),
        ("28.9", "nsys: start NULL", nsys("null", kernels=[(None, 2)]), imp),
        ("28.9", "nsys: start 1e30", nsys("e30", kernels=[(1e30, 2)]), imp),
        ("28.9", "nsys: StringIds.id 'x'", nsys("sid", strings=[("x", "k")]), imp),
        ("28.9", "nsys: ProfilerStep# with 30 digits", nsys("step30", nvtx=[(1, 5, "ProfilerStep#" + "9" * 30)]), imp),
        (
            "28.9",
            "kineto: cat {}",
            lambda: _write(
                d / "cat.json",
                '{"schemaVersion":1,"deviceProperties":[],"traceEvents":'
                '[{"ph":"X","cat":{},"name":"k","ts":1,"dur":1}]}',
            ),
            imp,
        ),
        ("28.9", "sacct: Submit '²'", sacct(sacct_ok.replace("|1790000000|", "|²|")), imp),
    ]


def issue_45(d: Path) -> list[Anchored]:
    """Issue 45's cases, each beside an anchor: a plain input of the same size through the
    same command, so time and peak RSS read as ratios (hostile / plain)."""
    seq = iter(range(1_000_000))

    def fresh(*labels: str) -> Path:
        """A new SQLite store holding one run per label (the run-word cases change their store)."""
        db = d / f"r45-{next(seq)}.sqlite"
        url = f"sqlite:///{db}"
        for i, label in enumerate(labels):
            capture = inputs.native_capture(d / f"r45-{label.strip() or 'x'}-{i}.json", label=label, ttft=1.0 + i)
            subprocess.run(
                [sys.executable, "-m", "workbench", "--store", url, "import", str(capture), "--label", label],
                capture_output=True,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                check=False,
            )
        return db

    def investigation(db: Path) -> Path:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "workbench",
                *on(db, "investigate", "new", "--lens", "inference", "--question", "q?"),
            ],
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            check=False,
        )
        return db

    def on(db: Path, *args: str) -> list[str]:
        return ["--store", f"sqlite:///{db}", *args]

    def folder(name: str) -> Path:
        path = d / f"{name}-{next(seq)}"
        path.mkdir()
        return path

    def diagnose(p: Path) -> list[str]:
        return ["diagnose", str(p)]

    def imp(p: Path) -> list[str]:
        return ["--store", f"sqlite:///{d / f'i45-{next(seq)}.sqlite'}", "import", str(p)]

    def stats(p: Path) -> list[str]:
        return ["stats", "--csv", str(p)]

    csv_size = 1_200_000
    big = 1_000_000
    return [
        (
            "45.1",
            "remove ' 3' (run 4 is labelled ' 3')",
            lambda: fresh("a", "b", "c", " 3"),
            lambda db: on(db, "remove", " 3"),
            lambda: fresh("a", "b", "c", "d"),
        ),
        (
            "45.1",
            "rename 3 X (run 5 is labelled '3')",
            lambda: fresh("a", "b", "c", "d", "3"),
            lambda db: on(db, "rename", "3", "X"),
            lambda: fresh("a", "b", "c", "d", "e"),
        ),
        (
            "45.2",
            "dump (pickle): 1M-element tuple key x 60,000 (1.2 MB)",
            lambda: inputs.pickle_rehashed_tuple_key(folder("rehash") / "_dump_0", 1_000_000, 60_000).parent,
            diagnose,
            lambda: inputs.pickle_plain(folder("plain") / "_dump_0", 1_240_000).parent,
        ),
        (
            "45.2",
            "inference-perf: manifests.yaml argument '-a' x 25,000",
            lambda: inputs.manifest_long_argument(folder("manifest"), "-a" * 25_000),
            imp,
            lambda: inputs.manifest_long_argument(folder("manifest"), "a" * 50_000),
        ),
        (
            "45.2",
            "stats --csv: 40,000 rounds of A and B (1.2 MB)",
            lambda: inputs.stats_csv(d / "v45.csv", 40_000),
            stats,
            lambda: inputs.stats_csv(d / "v45-plain.csv", 2_000, size=csv_size),
        ),
        (
            "45.2",
            "stats --csv: one line of 1.2 M commas",
            lambda: _write(d / "commas45.csv", "round,arm,value\n" + "," * csv_size),
            stats,
            lambda: inputs.stats_csv(d / "v45-plain2.csv", 2_000, size=csv_size),
        ),
        (
            "45.2",
            "secret hiding: a 1 MB argument '-a-a-a...'",
            lambda: _write(d / "arg45.txt", "-a" * (big // 2)),
            lambda p: ["@py", REDACT, str(p)],
            lambda: _write(d / "arg45-plain.txt", "a" * big),
        ),
        (
            "45.6",
            "import 'cand\\u00ad' beside 'cand'",
            lambda: inputs.native_capture(fresh("cand").with_suffix(".json"), label="cand\u00ad"),
            lambda capture: on(capture.with_suffix(".sqlite"), "import", str(capture)),
            lambda: inputs.native_capture(fresh("cand").with_suffix(".json"), label="cand2"),
        ),
        (
            "45.7",
            "native: invalid UTF-8 in the label",
            lambda: inputs.native_label_bytes(d / "utf45.json", b"ab\xff\xfe"),
            imp,
            lambda: inputs.native_label_bytes(d / "utf45-plain.json", b"abcd"),
        ),
        (
            "45.7",
            "dump: input_sizes 1.5",
            lambda: inputs.dump_pair(folder("sizes"), input_sizes=1.5),
            diagnose,
            lambda: inputs.dump_pair(folder("sizes-plain")),
        ),
        (
            "45.7",
            "dump: input_dtypes [{}]",
            lambda: inputs.dump_pair(folder("dtypes"), input_dtypes=[{"a": 1}]),
            diagnose,
            lambda: inputs.dump_pair(folder("dtypes-plain")),
        ),
        (
            "45.7",
            "torchrun error.json: a 401-digit timestamp",
            lambda: inputs.torchrun_error_file(folder("ts"), "1" * 401),
            diagnose,
            lambda: inputs.torchrun_error_file(folder("ts-plain"), "1772452802"),
        ),
        (
            "45.7",
            "bundle export -o /dev/full",
            lambda: investigation(fresh("a", "b")),
            lambda db: on(db, "bundle", "export", "1", "-o", "/dev/full"),
            lambda: investigation(fresh("a", "b")),
        ),
    ]


REDACT = (
    "import sys\nfrom pathlib import Path\nfrom workbench.formats.engine_flags import redact\n"
    "redact(Path(sys.argv[1]).read_text())"
)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _measure(wb_args: list[str], cap_gib: float) -> tuple[str, str, str, str]:
    """(exit code, peak RSS bytes, seconds, message) of one wb run, in a helper process of its own."""
    helper = subprocess.run(
        [sys.executable, __file__, "--cap", str(cap_gib), "--one", json.dumps(wb_args)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    rc_s, peak_s, secs, message = (helper.stdout.rstrip("\n").split("\t", 3) + ["", "", "", ""])[:4]
    return rc_s, peak_s, secs, message


def _ratio(value: str, anchor: str) -> str:
    try:
        return f"{float(value) / float(anchor):.1f}"
    except (ValueError, ZeroDivisionError):
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run only cases whose name contains this text")
    ap.add_argument("--item", help="run only cases of this issue item or issue (a prefix: 45, 45.2, 28.5)")
    ap.add_argument("--cap", type=float, default=8.0, help="address-space cap per run, GiB (default 8)")
    ap.add_argument("--postgres", help="a PostgreSQL URL for the read-only case (a database wb may create tables in)")
    ap.add_argument("--keep", help="write inputs here and keep them (default: a temporary directory)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one case (JSON argument list), print its rusage
    args = ap.parse_args()
    cap = int(args.cap * (1 << 30))

    if args.one:  # helper process: one wb run; its own RUSAGE_CHILDREN is that run's peak
        rc, message, seconds = run_wb(json.loads(args.one), cap)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
        print(f"{rc}\t{peak}\t{seconds:.1f}\t{message}")
        return 0

    directory = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="wb-hostile-"))
    directory.mkdir(parents=True, exist_ok=True)
    try:
        # The read-only store exists and holds one run.
        seed = inputs.native_capture(directory / "seed.json", label="seed", ttft=5.0)
        for url in [f"sqlite:///{directory / 'ro.sqlite'}", *([args.postgres] if args.postgres else [])]:
            subprocess.run(
                [sys.executable, "-m", "workbench", "--store", url, "import", str(seed)],
                capture_output=True,
                env={**os.environ, "PYTHONPATH": str(REPO)},
                check=False,
            )
        print(
            f"{'item':<5} {'input':<52} {'size':>18} {'peak RSS':>9} {'exit':>4} {'time':>6} {'t x':>5} {'RSS x':>5}"
            "  message",
            flush=True,
        )
        for case in cases(directory, args.postgres):
            item, name, make, wb_args = case[:4]
            if (args.only and args.only not in name) or (args.item and not item.startswith(args.item)):
                continue
            path = make()
            size = _size(path)
            rc_s, peak_s, secs, message = _measure(wb_args(path), args.cap)
            ratios = ("", "")
            if len(case) == 5:  # beside its anchor: the same command on a plain input
                _rc, anchor_peak, anchor_secs, _m = _measure(wb_args(case[4]()), args.cap)  # type: ignore[misc]
                ratios = (_ratio(secs, anchor_secs), _ratio(peak_s, anchor_peak))
            peak = _human(int(peak_s)) if peak_s.isdigit() else "?"
            shown = message.replace(str(directory) + "/", "")
            print(
                f"{item:<5} {name:<52} {size:>18} {peak:>9} {rc_s:>4} {secs:>5}s {ratios[0]:>5} {ratios[1]:>5}  "
                f"{shown[:200]}",
                flush=True,
            )
    finally:
        if not args.keep:
            shutil.rmtree(directory, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
