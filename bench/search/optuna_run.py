"""Bench row 14, the Optuna side: `--count` trials of a bench job (`--job`: `train` or
`late`, jobs.py) over the same grid values (`suggest_categorical`) with `TPESampler` (its
defaults, but `--startup` random trials first: its default is 10) and a pruner (`--pruner`): `sh`,
`SuccessiveHalvingPruner` (min resource 1, reduction 3), or `median`, `MedianPruner` (its
defaults: 5 startup trials, no warm-up), `--slots` worker processes sharing one study in
a journal file, as Optuna's docs run parallel trials on one machine. Runs inside the bench
image; every epoch goes to `--log` with its wall time, and when each trial function was
entered to `entered.jsonl` beside it (jobs.py)."""

import argparse
import subprocess
import sys

import jobs


def storage(path):
    import optuna
    from optuna.storages.journal import JournalFileBackend
    return optuna.storages.JournalStorage(JournalFileBackend(path))


def worker(args):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name="bench", storage=storage(args.journal),
        sampler=optuna.samplers.TPESampler(seed=args.seed * 100 + args.worker, n_startup_trials=args.startup),
        pruner=(optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3)
                if args.pruner == "sh" else optuna.pruners.MedianPruner()))
    spec = jobs.JOBS[args.job]

    def objective(trial):
        params = {name: trial.suggest_categorical(name, values) for name, values in spec["grid"].items()}
        pruned = []

        def report(epoch, accuracy):
            trial.report(accuracy, epoch)
            if trial.should_prune():
                pruned.append(epoch)
                return False
            return True

        key = "-".join(str(params[name]) for name in spec["params"]) + f"-{trial.number}"
        accuracy = jobs.run(args.job, params, args.seed, report, log=args.log, key=key)
        if pruned:
            raise optuna.TrialPruned()
        return accuracy

    study.optimize(objective, n_trials=args.count,
                   callbacks=[optuna.study.MaxTrialsCallback(args.count, states=None)])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--startup", type=int, default=10)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--journal", default="/tmp/optuna-journal.log")
    parser.add_argument("--worker", type=int)
    parser.add_argument("--job", default="train", choices=sorted(jobs.JOBS))
    parser.add_argument("--pruner", default="sh", choices=["sh", "median"])
    args = parser.parse_args()
    if args.worker is not None:
        return worker(args)
    import optuna
    optuna.create_study(study_name="bench", storage=storage(args.journal), direction="maximize")
    workers = [subprocess.Popen([sys.executable, __file__, *sys.argv[1:], "--worker", str(index)])
               for index in range(args.slots)]
    if any(process.wait() != 0 for process in workers):
        sys.exit(1)


if __name__ == "__main__":
    main()
