"""Run the lab simulator: `python -m labctl.sim --kubeconfig ... --topology ...`."""

import argparse
import faulthandler
import logging
import signal
import sys

from labctl.sim import agent, topology


def main():
    parser = argparse.ArgumentParser(prog="labctl.sim")
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--topology", required=True)
    parser.add_argument("--driver-mode", choices=("plugin", "always"), default="plugin")
    parser.add_argument("--kubelet-version", required=True)
    parser.add_argument("--state-dir", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    nodes = topology.load(args.topology)
    sim = agent.Simulator(agent.load_client(args.kubeconfig), nodes, args.driver_mode,
                          args.kubelet_version, agent.ready_file_for(args.state_dir))
    signal.signal(signal.SIGTERM, lambda *_: sim.stop.set())
    # `kill -USR1 <pid>` writes every thread's stack to the log, for a simulator that seems stuck.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    sim.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
