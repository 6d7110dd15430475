"""Kernel and driver failures as signatures (issue 29 item 5).

Each sample line is the kernel's or driver's own format string filled in, as cited: a
documented line, not a capture (the real captures under tests/data/failures cover Xid,
OOM killer and segfault lines). Every signature has a class and a line of meaning.
"""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from workbench.diagnostics import diagnose, logs
from workbench.diagnostics.render import render

DATA = Path(__file__).resolve().parent.parent / "data" / "failures"

DOCUMENTED = [
    # kernel/panic.c: pr_emerg("Kernel panic - not syncing: %s\n", buf)
    ("kernel_panic", "kernel", "Kernel panic - not syncing: Fatal exception in interrupt"),
    # arch/x86/kernel/dumpstack.c: "Oops: %04lx [#%d]%s%s%s%s%s\n"
    ("kernel_oops", "kernel", "Oops: 0002 [#1] PREEMPT SMP NOPTI"),
    # arch/x86/mm/fault.c: "BUG: unable to handle page fault for address: %px\n"
    ("kernel_oops", "kernel", "BUG: unable to handle page fault for address: ffffa0b2c3d4e000"),
    # lib/bug.c: pr_crit("kernel BUG at %s:%u!\n", file, line)
    ("kernel_bug", "kernel", "kernel BUG at mm/slub.c:305!"),
    # kernel/watchdog.c: "BUG: soft lockup - CPU#%d stuck for %us! [%s:%d]\n"
    ("soft_lockup", "kernel", "watchdog: BUG: soft lockup - CPU#12 stuck for 23s! [python:48213]"),
    # kernel/watchdog_perf.c: "Watchdog detected hard LOCKUP on cpu %d\n"
    ("hard_lockup", "kernel", "NMI watchdog: Watchdog detected hard LOCKUP on cpu 7"),
    # kernel/hung_task.c: "INFO: task %s:%d blocked for more than %ld seconds.\n"
    ("hung_task", "kernel", "INFO: task pt_main_thread:91234 blocked for more than 122 seconds."),
    # arch/x86/kernel/cpu/mce/core.c: pr_info(HW_ERR "Machine check events logged\n") (HW_ERR = "[Hardware Error]: ")
    ("machine_check", "hardware", "mce: [Hardware Error]: Machine check events logged"),
    ("machine_check", "hardware", "mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 5: be00000000800400"),
    # NVIDIA driver (nv.c / RM): the adapter init failure and GSP RPC faults that come without an Xid
    ("nvrm_error", "driver", "NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x62:0x55:2477)"),
    ("nvrm_error", "driver", "NVRM: GPU at PCI:0000:9b:00: GPU-5b8a1e5c: GSP RPC timeout waiting for response"),
    # NVRM ECC / row remapping messages (the Xid 48/63/64 codes are read by the Xid signature)
    ("gpu_ecc", "hardware", "NVRM: GPU 0000:b1:00.0: uncorrectable ECC error detected in framebuffer"),
    ("gpu_ecc", "hardware", "NVRM: GPU 0000:b1:00.0: row remapping pending, reset the GPU"),
]

PRINTK_FORMATS = [
    ("[ 1137.351234] ", "journalctl short-monotonic / dmesg [ s.us] (boot-relative)", 1137.351234),
    ("<4>[ 1137.351234] ", "printk with levels <N>[ s.us] (boot-relative)", 1137.351234),
    ("4,1201,1137351234,-;", "/dev/kmsg records (prio,seq,usec)", 1137.351234),
    ("2025-01-21T04:41:44+0000 node7 kernel: ", "dmesg --time-format iso / journalctl short-iso", None),
]


@pytest.mark.parametrize("kind,klass,line", DOCUMENTED, ids=[f"{k}:{text[:30]}" for k, _, text in DOCUMENTED])
def test_documented_line_is_a_signature_with_class_and_meaning(tmp_path, kind, klass, line):
    path = tmp_path / "dmesg.txt"
    path.write_text(f"[  100.000001] ordinary line\n[  101.500000] {line}\n")
    (event,) = logs.parse_file(path)
    assert (event.kind, event.values["class"]) == (kind, klass)
    assert event.values["meaning"] and event.since_boot == 101.5 and event.line == 2


def test_every_signature_has_a_class_from_the_vocabulary():
    classes = {"hardware", "driver", "kernel", "application", "memory limit"}
    assert {sig.klass for sig in logs.KERNEL_SIGNATURES} <= classes
    assert set(logs.SIGNATURE_CLASS.values()) <= classes
    assert {sig.kind for sig in logs.KERNEL_SIGNATURES} <= {k for k, _, _ in DOCUMENTED}


def test_ordinary_driver_lines_are_not_failures(tmp_path):
    path = tmp_path / "dmesg.txt"
    path.write_text(
        "[    5.1] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15\n"
        "[    5.2] nvidia-nvswitch: Probing device 0000:05:00.0\n"
        "[    6.0] BUG? no, an ordinary line\n"
    )
    assert logs.parse_file(path) == []


@pytest.mark.parametrize("prefix,name,since_boot", PRINTK_FORMATS, ids=[p[1] for p in PRINTK_FORMATS])
def test_printk_formats_keep_their_stamp_and_are_named(tmp_path, prefix, name, since_boot):
    path = tmp_path / "kern.log"
    xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    path.write_text(f"{prefix}{xid}\n{prefix}Kernel panic - not syncing: Fatal exception\n")
    events = logs.parse_file(path)
    assert [e.kind for e in events] == ["xid", "kernel_panic"]
    if since_boot is not None:
        assert events[0].since_boot == pytest.approx(since_boot)  # <4>[...] used to lose it
    else:
        assert events[0].time is not None
    assert logs.log_format(path) == name


def test_pstore_erst_panic_dump_is_diagnosed(tmp_path):
    dump = tmp_path / "dmesg-erst-7301204938174590977"
    dump.write_text(
        "Panic#1 Part1\n"
        "<6>[ 8812.004511] nvidia-nvswitch0: open (major=509)\n"
        "<4>[ 8870.218311] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
        "bus.\n"
        "<0>[ 8871.000230] Kernel panic - not syncing: Fatal exception in interrupt\n"
    )
    report = diagnose([dump]).report()
    assert [(lf.file, lf.format[:15]) for lf in report.inputs.log_formats] == [(str(dump), "pstore/ERST dum")]
    kinds = [row.kind for row in report.timeline]
    assert "kernel_panic" in kinds and "xid" in kinds
    assert report.first_failure.status != "none"
    assert report.failure_class.klass == "node-or-gpu-hardware"


def test_single_xid_names_its_file_and_boot_time(tmp_path):
    path = tmp_path / "node7-dmesg.txt"
    path.write_text(
        "<4>[ 1137.35] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
    )
    out = StringIO()
    render(diagnose([path]).report(), console=Console(file=out, width=80))
    text = out.getvalue()
    assert "on - at unplaced" not in text
    assert "node7-dmesg.txt" in text and "boot+1137.35 s" in text
    assert "log node7-dmesg.txt: printk with levels <N>[ s.us] (boot-relative)" in text


def test_real_gpud_logs_name_their_formats():
    assert logs.log_format(DATA / "gpud" / "dmesg-with-xid-119.log") == "dmesg -T (wall clock, no zone)"
    assert logs.log_format(DATA / "gpud" / "memory-dmesg.decode.iso.log").startswith("dmesg --time-format iso")
