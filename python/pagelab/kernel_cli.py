"""`pagelab kernel status | setup | teardown | probe` (docs/kernel-backend.md).

Every command builds this parser; the kernel modules load only in the kernel commands
(importing them cost every other command 7 ms of its start)."""

from __future__ import annotations

import json

from .kernel.probe_sizes import PROBE_MB, PROBE_PAGES, PROBE_READS


def _mib(n: int) -> str:
    return f"{n / 2**20:,.0f} MiB"


def status_lines(s: dict) -> list:
    """The human form of :func:`host_status`."""
    lines = [f"root: {'yes' if s['root'] else 'no (the kernel backend and setup/teardown need root)'}",
             f"kernel: {s['kernel']} ({s['machine']}), page size {s['page_size']} B, memory {_mib(s['memory_bytes'])}"]
    mem = s["cgroup"]["memory"]
    if mem is None:
        lines.append("memory cgroup: none (no v1 'memory' hierarchy, no 'memory' in the v2 controllers)")
    else:
        acct = "swap accounted" if mem["swap_accounting"] else "swap not accounted per cgroup"
        lines.append(f"memory cgroup: v{mem['version']} at {mem['mount']} (this process in {mem['own']}; {acct})")
    for point, ctl in s["cgroup"]["v1"].items():
        lines.append(f"  cgroup v1 {point}: {', '.join(ctl) or '-'}")
    for point, ctl in s["cgroup"]["v2"].items():
        lines.append(f"  cgroup v2 {point}: {', '.join(ctl) or 'no controllers'}")
    if s["swap"]:
        for d in s["swap"]:
            lines.append(f"swap: {d['name']} ({d['type']}) {_mib(d['size_bytes'])}, {_mib(d['used_bytes'])} used, "
                         f"priority {d['priority']}")
    else:
        lines.append("swap: none active (pagelab kernel setup --swap SIZE)")
    rec = s["pagelab_setup"]
    if rec:
        lines.append(f"pagelab setup: {rec['swap_file']} ({_mib(rec['size_bytes'])}, "
                     f"{'enabled' if rec['enabled'] else 'not enabled'}) since {rec['time']}")
    for key in ("userfaultfd", "process_madvise"):
        v = s[key]
        state = {True: "yes", False: "no", None: "unknown"}[v["available"]]
        lines.append(f"{key}: {state} ({v['detail']})")
    lines.append(f"memory pressure (PSI): {'yes' if s['memory_pressure'] else 'no'}")
    return lines


def cmd_kernel_status(args) -> int:
    from .kernel.status import host_status

    s = host_status()
    if args.json:
        print(json.dumps(s, indent=2))
    else:
        print("\n".join(status_lines(s)))
    return 0


def cmd_kernel_setup(args) -> int:
    from .kernel.swapfile import setup_swap

    setup_swap(args.swap, args.file)
    return 0


def cmd_kernel_teardown(args) -> int:
    from .kernel.swapfile import teardown_swap

    teardown_swap()
    return 0


def cmd_kernel_probe(args) -> int:
    from .kernel.probe import fit, probe, probe_lines

    measured = probe(args.dir, args.mb, args.reads, args.pages)
    fitted = fit(measured)
    if args.json:
        print(json.dumps({"measured": measured, "fitted": fitted}, indent=2))
    else:
        print("\n".join(probe_lines(measured, fitted)))
    return 0


def _positive(what: str, most: int, least: int = 1):
    def parse(text: str) -> int:
        import argparse

        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got '{text}'") from None
        if not least <= v <= most:
            raise argparse.ArgumentTypeError(f"expected {least} to {most:,}, got {v}")
        return v
    parse.__name__ = what
    return parse


def add_kernel_parser(sub) -> object:
    k = sub.add_parser("kernel", help="the kernel backend: what this machine offers, swap setup and teardown",
                       description="The kernel backend runs configurations as real processes in memory cgroups "
                                   "(pagelab run CONFIG --on kernel). Nothing system-wide changes except through "
                                   "setup and teardown (docs/kernel-backend.md).")
    ksub = k.add_subparsers(dest="kernel_command", metavar="SUBCOMMAND")
    st = ksub.add_parser("status", help="root, cgroup version and controllers, swap, kernel version, "
                                        "userfaultfd, process_madvise")
    st.add_argument("--json", action="store_true", help="print the status as JSON")
    st.set_defaults(func=cmd_kernel_status)
    su = ksub.add_parser("setup", help="create and enable a swap file (root); recorded for teardown")
    su.add_argument("--swap", required=True, metavar="SIZE", help="swap file size, e.g. 256M, 1G")
    su.add_argument("--file", metavar="PATH", help="swap file to create (default /var/tmp/pagelab.swap; "
                                                    "must not exist)")
    su.set_defaults(func=cmd_kernel_setup)
    td = ksub.add_parser("teardown", help="undo what setup did: swapoff and remove its swap file")
    td.set_defaults(func=cmd_kernel_teardown)
    pr = ksub.add_parser("probe", help="measure the swap device and the fault costs, and fit the simulator's "
                                       "disk and fault keys to them",
                         description="Measures 4 KiB random reads and sequential writes (O_DIRECT) on the device "
                                     "holding DIR, the cost of a first touch and (with active swap) of a swap-in, "
                                     "and prints the simulator's [system], [disk] and [swap] keys fitted to them "
                                     "(docs/kernel-backend.md, Calibration). Writes and removes one file in DIR.")
    pr.add_argument("--dir", metavar="DIR", help="where the probe file goes (default: the swap file's directory, "
                                                 "else /var/tmp)")
    pr.add_argument("--mb", type=_positive("--mb", 65536), default=PROBE_MB, help=f"probe file size in MiB (default {PROBE_MB})")
    pr.add_argument("--reads", type=_positive("--reads", 1_000_000), default=PROBE_READS,
                    help=f"4 KiB random reads (default {PROBE_READS})")
    pr.add_argument("--pages", type=_positive("--pages", 1 << 24, 16), default=PROBE_PAGES,
                    help=f"pages of the fault probe's region (default {PROBE_PAGES})")
    pr.add_argument("--json", action="store_true", help="print the measurements and the fit as JSON")
    pr.set_defaults(func=cmd_kernel_probe)
    k.set_defaults(help_parser=k)
    return k
