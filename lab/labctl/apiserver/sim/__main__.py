"""Run the lab simulator: `python -m labctl.apiserver.sim --kubeconfig ... --topology ...`."""

import argparse
import faulthandler
import logging
import signal
import sys

from labctl.apiserver.sim import agent, report, topology


def main():
    parser = argparse.ArgumentParser(prog="labctl.apiserver.sim")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--topology", required=True)
    parser.add_argument("--driver-mode", choices=("plugin", "always"), default="plugin")
    parser.add_argument("--kubelet-version", required=True)
    parser.add_argument("--state-dir", required=True)
    # always mode: publish as NVIDIA's 0.5.0 plugin with ConsumableShares=true and this mode.
    parser.add_argument("--consumable-shares", default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    report_file = report.path_for(args.state_dir)
    try:
        nodes = topology.load(args.topology)
    except Exception as exc:  # noqa: BLE001 - reported, then fatal as before
        report.write(report_file, {}, failed="%s: %s" % (type(exc).__name__, exc))
        raise
    sim = agent.Simulator(agent.load_client(args.kubeconfig), nodes, args.driver_mode,
                          args.kubelet_version, agent.ready_file_for(args.state_dir), report_file,
                          consumable_shares=args.consumable_shares)
    signal.signal(signal.SIGTERM, lambda *_: sim.stop.set())
    # `kill -USR1 <pid>` writes every thread's stack to the log, for a simulator that seems stuck.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    try:
        return sim.run()
    except Exception as exc:
        # Not only a traceback in a log nobody reads: `lab up` and `lab status` show it.
        sim.record_failure(exc)
        raise


if __name__ == "__main__":
    sys.exit(main())
