"""Bench row 14, the Ray Tune side: the 27-configuration grid of `train.py` under
`ASHAScheduler` (max_t 9, grace 1, reduction 3, as tfimg's `early_stop`), `--slots`
trials at a time (one CPU each), as a Ray Tune user writes it. Runs inside the bench
image; every epoch goes to `--log` with its wall time (train.py)."""

import argparse

import train as job

GRID = {"lr": [1e-4, 5e-4, 1e-3], "wd": [1e-5, 5e-5, 1e-4], "aug": ["low", "medium", "high"]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--slots", type=int, default=2)
    args = parser.parse_args()
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    ray.init(num_cpus=args.slots, include_dashboard=False, object_store_memory=200 * 1024 * 1024,
             log_to_driver=False)
    seed, log = args.seed, args.log

    def trainable(config):
        import train as job  # in the worker (PYTHONPATH has the bench's code)
        key = f"{config['lr']}-{config['wd']}-{config['aug']}-{tune.get_context().get_trial_id()}"
        job.train(config["lr"], config["wd"], config["aug"], seed,
                  lambda epoch, accuracy: tune.report({"val_accuracy": accuracy, "epoch": epoch}),
                  log=log, key=key)

    space = {name: tune.grid_search(values) for name, values in GRID.items()}
    scheduler = ASHAScheduler(time_attr="training_iteration", max_t=job.EPOCHS, grace_period=1,
                              reduction_factor=3)
    tuner = tune.Tuner(
        tune.with_resources(trainable, {"cpu": 1}),
        param_space=space,
        tune_config=tune.TuneConfig(metric="val_accuracy", mode="max", scheduler=scheduler,
                                    max_concurrent_trials=args.slots),
        run_config=tune.RunConfig(storage_path="/tmp/ray_results", verbose=0),
    )
    tuner.fit()


if __name__ == "__main__":
    main()
