"""Profile one run of a collection module the way AnsiballZ runs it (same loader, same result
encoding), in this process, against the cluster of $KUBECONFIG (a lab: `eval "$(make -s lab-env)"`).

    python tests/benchmarks/profile_module.py dra.gpu.resource_slice_info '{"driver": "gpu.nvidia.com"}'
    python tests/benchmarks/profile_module.py --cprofile out.prof dra.gpu.resource_slice_info '{...}'

pyinstrument (a sampling profiler, low overhead; `pip install pyinstrument`) prints a call tree;
without it, or with --cprofile, cProfile's cumulative and own-time tables are printed. The
module's own output is discarded. What this leaves out is Ansible's side: the interpreter start
(see `ansible localhost -m ping`) and the controller's handling of the result.
"""

import argparse
import json
import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module", help="fully qualified name, e.g. dra.gpu.resource_slice_info")
    parser.add_argument("args", nargs="?", default="{}", help="the module's arguments as JSON")
    parser.add_argument("--cprofile", metavar="FILE", help="use cProfile and keep its stats in FILE")
    parser.add_argument("--top", type=int, default=30, help="cProfile rows to print")
    options = parser.parse_args()
    sys.path.insert(0, os.path.join(ROOT, "build", "collections"))
    namespace, name, module = options.module.split(".")
    params = dict(json.loads(options.args), _ansible_check_mode=False, _ansible_no_log=False,
                  _ansible_debug=False, _ansible_diff=False, _ansible_verbosity=0,
                  _ansible_module_name=options.module, _ansible_keep_remote_files=False)
    payload = json.dumps({"ANSIBLE_MODULE_ARGS": params}).encode()
    fqn = "ansible_collections.%s.%s.plugins.modules.%s" % (namespace, name, module)

    profiler = None
    if not options.cprofile:
        try:
            from pyinstrument import Profiler
            profiler = Profiler(interval=0.001)
        except ImportError:
            options.cprofile = os.path.join(os.environ.get("TMPDIR", "/tmp"), "profile_module.prof")
    if profiler is None:
        import cProfile
        profiler = cProfile.Profile()
        start, stop = profiler.enable, profiler.disable
    else:
        start, stop = profiler.start, profiler.stop

    real_stdout, began = sys.stdout, time.monotonic()
    start()
    from ansible.module_utils._internal._ansiballz import _loader
    sys.stdout = open(os.devnull, "w")
    try:
        _loader.run_module(json_params=payload, profile="legacy", module_fqn=fqn,
                           modlib_path=os.path.join(ROOT, "build", "collections"), extensions={})
    except SystemExit:
        pass
    finally:
        stop()
        sys.stdout.close()
        sys.stdout = real_stdout
    print("%s: %.2f s in this process (imports of ansible.module_utils included)"
          % (options.module, time.monotonic() - began))
    if options.cprofile:
        import pstats
        profiler.dump_stats(options.cprofile)
        stats = pstats.Stats(options.cprofile)
        stats.sort_stats("cumulative").print_stats(options.top)
        stats.sort_stats("tottime").print_stats(options.top // 2)
    else:
        print(profiler.output_text(unicode=False, color=False))


if __name__ == "__main__":
    main()
