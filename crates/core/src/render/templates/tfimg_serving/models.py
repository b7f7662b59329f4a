"""The models served: loading, watching for new versions and config changes, looking up."""

import os
import threading
import time

from .errors import ApiError
from .metrics import LOAD_ATTEMPTS, LOAD_LATENCY, forget_series
from .model_config import container_path, parse_model_config, served_versions
from .servables import Servable
from .settings import (
    MAX_CONFIG_BYTES,
    MODEL_CONFIG,
    MODEL_CONFIG_POLL_SECONDS,
    MODEL_NAME,
    MODELS,
    POLL_SECONDS,
    log,
)


class Models:
    """The models served: every folder under MODELS (its highest version), or those of the
    model config file MODEL_CONFIG (each its policy's versions, with its labels), reread
    when the file changes. A version that appears later is loaded once its files stopped
    changing; the versions its policy no longer wants are unloaded once one it wants is
    served (TensorFlow Serving's availability-preserving order)."""

    def __init__(self):
        self.lock = threading.Lock()  # the maps below
        self.polling = threading.Lock()  # one poll at a time: the watcher's, a reload's
        self.served = {}  # name -> {version: Servable}
        self.states = {}  # name -> {version: (state, error message)}
        self.labels = {}  # name -> {label: version}
        self.seen = {}  # (name, version) -> its files at the last poll
        self.failed = {}  # (name, version) -> its files when loading them failed
        self.missing = set()  # the configured folders found missing (logged once)
        self.config = None  # the ModelServerConfig in force; None: every folder under MODELS
        self.config_text = None  # the file's text it was read from
        self.configured = (
            set()
        )  # the names configured or served at the last poll: the metrics' labels
        self.held = None  # (models the config dropped, still served; models it names, none served)

    def watch(self):
        first, config_read = True, None
        while True:
            try:
                now = time.monotonic()
                due = config_read is None or (
                    MODEL_CONFIG_POLL_SECONDS > 0 and now - config_read >= MODEL_CONFIG_POLL_SECONDS
                )
                if MODEL_CONFIG and due:
                    config_read = now
                    self.read_config_file()
                with self.polling:
                    self.poll(wait_for_quiet=not first)
            except Exception:  # a poll must never end the watcher
                log.exception("scanning the models failed")
            first = False
            time.sleep(POLL_SECONDS)

    def read_config_file(self):
        """MODEL_CONFIG applied when its text changed; a config that does not parse is
        logged and the one in force kept."""
        try:
            with open(MODEL_CONFIG, encoding="utf-8") as file:
                text = file.read(MAX_CONFIG_BYTES + 1)
        except (OSError, ValueError) as error:
            if self.config_text != "":
                log.error("the model config %s cannot be read: %s", MODEL_CONFIG, error)
                self.config_text = ""
            return
        if text == self.config_text:
            return
        self.config_text = text
        try:
            config = parse_model_config(text)
        except ApiError as error:
            log.error("the model config %s is not applied: %s", MODEL_CONFIG, error)
            return
        self.apply(config)
        log.info(
            "model config %s applied: %s",
            MODEL_CONFIG,
            ", ".join(c.name for c in config.model_config_list.config),
        )

    def apply(self, config):
        with self.lock:
            self.config = config
            self.labels = {c.name: dict(c.version_labels) for c in config.model_config_list.config}

    def reload(self, config):
        """A config from HandleReloadConfigRequest, applied and loaded before it returns."""
        self.apply(config)
        with self.polling:
            self.poll(wait_for_quiet=False)

    def entries(self):
        """(name, folder, version policy or None) of each model to serve."""
        with self.lock:
            config = self.config
        if config is None:
            return [(name, os.path.join(MODELS, name), None) for name in model_folders(MODELS)]
        return [
            (
                c.name,
                container_path(c.base_path),
                c.model_version_policy if c.HasField("model_version_policy") else None,
            )
            for c in config.model_config_list.config
        ]

    def poll(self, wait_for_quiet):
        """Loads the versions each model's policy wants that are not served yet, then
        unloads those it no longer wants. After the first poll, a version is loaded only
        once its files are as they were a poll ago (a copy in progress is not read
        half-way), and one that failed only once its files change."""
        entries = self.entries()
        names = {name for name, _, _ in entries}
        with self.lock:
            self.configure(names | set(self.served))
        for name, folder, policy in entries:
            if not os.path.isdir(folder):
                if folder not in self.missing:
                    log.error("model %s: its folder %s is not in the container", name, folder)
                    self.missing.add(folder)
                continue
            self.missing.discard(folder)
            versions = versions_in(folder)
            wanted = served_versions(policy, sorted(versions))
            for version in wanted:
                with self.lock:
                    if version in self.served.get(name, {}):
                        continue
                key = (name, version)
                files = files_of(versions[version])
                changed = self.seen.get(key) != files
                self.seen[key] = files
                if self.failed.get(key) == files or (wait_for_quiet and changed):
                    continue
                self.load(name, version, versions[version], files)
            with self.lock:
                served = list(self.served.get(name, {}))
            if not wanted or any(version in served for version in wanted):
                for version in served:
                    if version not in wanted:
                        self.unload(name, version)
        # The models the config no longer names go once every model it names serves
        # (TensorFlow Serving's order): a config whose models cannot load, or whose folder is
        # not in the container, never leaves the server serving nothing.
        with self.lock:
            dropped = [
                (name, version)
                for name in self.served
                if name not in names
                for version in self.served[name]
            ]
            waiting = sorted(name for name in names if not self.served.get(name))
        if not waiting:
            for name, version in dropped:
                self.unload(name, version)
        held = (
            (tuple(sorted({name for name, _ in dropped})), tuple(waiting))
            if waiting and dropped
            else None
        )
        if held and held != self.held:
            log.warning("still serving %s until %s load", ", ".join(held[0]), ", ".join(held[1]))
        self.held = held
        with self.lock:
            self.configure(names | set(self.served))

    def load(self, name, version, path, files):
        self.set_state(name, version, "LOADING", "")
        log.info("loading model %s version %d from %s", name, version, path)
        started = time.perf_counter()
        try:
            servable = Servable(name, version, path)
        except Exception as error:  # any broken SavedModel: reported in the status
            LOAD_ATTEMPTS.labels(path, "fail").inc()
            self.failed[(name, version)] = files
            self.set_state(name, version, "END", f"loading failed: {error}")
            log.error("model %s version %d could not be loaded: %s", name, version, error)
            return
        LOAD_ATTEMPTS.labels(path, "success").inc()
        LOAD_LATENCY.labels(path).inc((time.perf_counter() - started) * 1e6)
        with self.lock:
            self.served.setdefault(name, {})[version] = servable
            self.states.setdefault(name, {})[version] = ("AVAILABLE", "")
        if servable.warmed_up:
            log.info(
                "model %s version %d warmed up with %d requests", name, version, servable.warmed_up
            )
        log.info("serving model %s version %d", name, version)

    def unload(self, name, version):
        with self.lock:
            servable = self.served.get(name, {}).pop(version, None)
            if not self.served.get(name):
                self.served.pop(name, None)
            self.states.setdefault(name, {})[version] = ("END", "")
        if servable is not None:
            servable.close()
            log.info("model %s version %d unloaded", name, version)

    def configure(self, names):
        """`names` are the models configured or served now (the lock held); the metrics'
        series of any other go."""
        for name in self.configured - names:
            forget_series(name)
        self.configured = names

    def set_state(self, name, version, state, message):
        with self.lock:
            self.states.setdefault(name, {})[version] = (state, message)

    def status(self, name, version):
        """Every version's state, or the one asked for (a label is not looked at: TensorFlow
        Serving's status answers for every version then too)."""
        with self.lock:
            states = dict(self.states.get(name, {}))
        if version is not None:
            if version not in states:
                raise ApiError(404, f"Could not find version {version} of model {name}")
            states = {version: states[version]}
        if not states:
            raise ApiError(404, f"Could not find any versions of model {name}")
        return {
            "model_version_status": [
                {
                    "version": str(number),
                    "state": state,
                    "status": {
                        "error_code": "UNKNOWN" if message else "OK",
                        "error_message": message,
                    },
                }
                for number, (state, message) in sorted(states.items(), reverse=True)
            ]
        }

    def get(self, name, version=None, label=None):
        """The servable of `name` a request names: by `version`, by `label`, or its highest."""
        with self.lock:
            if label is not None:
                version = self.labels.get(name, {}).get(label)
                if version is None:
                    raise ApiError(400, f"Unrecognized servable version label: {label[:200]}")
            versions = self.served.get(name, {})
            if version is None:
                servable = versions[max(versions)] if versions else None
            else:
                servable = versions.get(version)
        if servable is None:
            wanted = "Latest" if version is None else "Specific"
            detail = name if version is None else f"{name}, {version}"
            raise ApiError(404, f"Servable not found for request: {wanted}({detail})")
        return servable


def model_folders(folder):
    """The model folders under `folder`, by name."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [
        name
        for name in names
        if MODEL_NAME.match(name) and os.path.isdir(os.path.join(folder, name))
    ]


def versions_in(base):
    """{version: path} of the numbered SavedModel folders under a model's folder."""
    try:
        entries = os.listdir(base)
    except OSError:
        return {}
    found = {}
    for entry in entries:
        path = os.path.join(base, entry)
        if entry.isdigit() and os.path.isfile(os.path.join(path, "saved_model.pb")):
            found[int(entry)] = path
    return found


def files_of(path):
    """Every file under `path` with its size and time: equal on two polls, the copy is done."""
    listing = []
    for root, _, files in os.walk(path):
        for file in files:
            stat = os.stat(os.path.join(root, file))
            listing.append((root, file, stat.st_size, stat.st_mtime_ns))
    return sorted(listing)
