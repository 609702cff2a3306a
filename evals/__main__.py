"""`python -m evals run ...` (the eval harness), `python -m evals bench` (speed benchmarks) and
`python -m evals resolutions` (issue-thread resolutions against labelled threads) and
`python -m evals wrappers` (the same answer under a log collector's line prefixes) and
`python -m evals flags` (the flags a how-to question is answered with)."""

import sys


def main() -> int:
    argv = sys.argv[1:]
    if argv and argv[0] == "bench":
        from evals.bench import main as bench

        return bench(argv[1:])
    if argv and argv[0] == "resolutions":
        from evals.resolutions import main as resolutions

        return resolutions(argv[1:])
    if argv and argv[0] == "wrappers":
        from evals.wrappers import main as wrappers

        return wrappers(argv[1:])
    if argv and argv[0] == "flags":
        from evals.flag_questions import main as flags

        return flags(argv[1:])
    if argv and argv[0] == "run":
        argv = argv[1:]
    from evals.run import main as run

    return run(argv)


sys.exit(main())
