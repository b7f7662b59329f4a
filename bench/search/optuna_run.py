"""Bench row 14, the Optuna side: `--count` trials of `train.py` over the same grid values
(`suggest_categorical`) with `TPESampler` (its defaults: 10 random startup trials) and
`SuccessiveHalvingPruner` (min resource 1, reduction 3, as tfimg's `early_stop`),
`--slots` worker processes sharing one study in a journal file, as Optuna's docs run
parallel trials on one machine. Runs inside the bench image; every epoch goes to `--log`
with its wall time (train.py)."""

import argparse
import subprocess
import sys

import train as job

GRID = {"lr": [1e-4, 5e-4, 1e-3], "wd": [1e-5, 5e-5, 1e-4], "aug": ["low", "medium", "high"]}


def storage(path):
    import optuna
    from optuna.storages.journal import JournalFileBackend
    return optuna.storages.JournalStorage(JournalFileBackend(path))


def worker(args):
    import optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(
        study_name="bench", storage=storage(args.journal),
        sampler=optuna.samplers.TPESampler(seed=args.seed * 100 + args.worker),
        pruner=optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=3))

    def objective(trial):
        params = {name: trial.suggest_categorical(name, values) for name, values in GRID.items()}
        pruned = []

        def report(epoch, accuracy):
            trial.report(accuracy, epoch)
            if trial.should_prune():
                pruned.append(epoch)
                return False
            return True

        key = f"{params['lr']}-{params['wd']}-{params['aug']}-{trial.number}"
        accuracy = job.train(params["lr"], params["wd"], params["aug"], args.seed, report,
                             log=args.log, key=key)
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
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--journal", default="/tmp/optuna-journal.log")
    parser.add_argument("--worker", type=int)
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
