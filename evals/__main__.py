"""`python -m evals run ...` (the eval harness) and `python -m evals bench` (speed benchmarks)."""

import sys


def main() -> int:
    argv = sys.argv[1:]
    if argv and argv[0] == "bench":
        from evals.bench import main as bench

        return bench(argv[1:])
    if argv and argv[0] == "run":
        argv = argv[1:]
    from evals.run import main as run

    return run(argv)


sys.exit(main())
