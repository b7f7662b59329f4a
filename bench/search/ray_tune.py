"""Bench row 14, the Ray Tune side: the 27-configuration grid of a bench job (`--job`:
`train` or `late`, jobs.py) under `ASHAScheduler` (max_t the job's epochs, grace 1,
reduction 3), `--slots` trials at a time (one CPU each), as a Ray Tune user writes it.
Runs inside the bench image; every epoch goes to `--log` with its wall time, and when
each trial function was entered to `entered.jsonl` beside it (jobs.py)."""

import argparse

import jobs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--job", default="train", choices=sorted(jobs.JOBS))
    args = parser.parse_args()
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    ray.init(num_cpus=args.slots, include_dashboard=False, object_store_memory=200 * 1024 * 1024,
             log_to_driver=False)
    seed, log, name = args.seed, args.log, args.job

    def trainable(config):
        import jobs  # in the worker (PYTHONPATH has the bench's code)
        key = "-".join(str(config[param]) for param in jobs.JOBS[name]["params"])
        jobs.run(name, config, seed,
                 lambda epoch, accuracy: tune.report({"val_accuracy": accuracy, "epoch": epoch}),
                 log=log, key=f"{key}-{tune.get_context().get_trial_id()}")

    space = {param: tune.grid_search(values) for param, values in jobs.JOBS[name]["grid"].items()}
    scheduler = ASHAScheduler(time_attr="training_iteration", max_t=jobs.epochs(name), grace_period=1,
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
