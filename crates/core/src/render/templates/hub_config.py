# tfimg's JupyterHub configuration: the same for every team, kept in the hub's image.
# What is the team's own is in @FOLDER@/team.json, which `tfimg up` writes from the team
# file and copies in before the hub starts: the members, the admins, the idle timeout and,
# for each member, the container tfimg's launcher planned for her server.
import asyncio
import html
import json
import os
import sys

import nativeauthenticator
from dockerspawner import DockerSpawner
from tornado import web

c = get_config()  # noqa: F821

# Nothing the hub writes (its database of password hashes, the cookie secret, logs) is
# readable by anyone but the hub.
os.umask(0o077)

with open("@FOLDER@/team.json", encoding="utf-8") as settings_file:
    team = json.load(settings_file)
members = team["members"]

# One HTTPS address: JupyterHub's proxy (configurable-http-proxy) with the team's certificate.
c.JupyterHub.bind_url = f"https://0.0.0.0:{team['listen_port']}/"
c.JupyterHub.ssl_cert = "@FOLDER@/cert.pem"
c.JupyterHub.ssl_key = "@FOLDER@/key.pem"
# The hub's API: the proxy beside it, and members' servers on their own networks, which
# the hub's container joins (`hub_host` is its name there).
c.JupyterHub.hub_bind_url = f"http://0.0.0.0:{team['api_port']}"
c.JupyterHub.hub_connect_url = f"http://{team['hub_host']}:{team['api_port']}"
c.ConfigurableHTTPProxy.pid_file = "/tmp/jupyterhub-proxy.pid"

# What survives `tfimg down` and `up`: the state volume. Members' servers outlive the hub's
# own restart (`up` restarts it when the team file's settings change): the new hub finds
# them through its database and routes to them again.
c.JupyterHub.cleanup_servers = False
c.JupyterHub.db_url = "sqlite:///@STATE@/jupyterhub.sqlite"
c.JupyterHub.cookie_secret_file = "@STATE@/jupyterhub_cookie_secret"

# Sign-in: the team file's members only. Nobody signs up (not even as a member who has not
# signed in yet): a member's first password is the admin's (`tfimg hub passwd`), which she
# then changes at /hub/change-password.
c.JupyterHub.authenticator_class = "native"
c.JupyterHub.template_paths = [os.path.join(os.path.dirname(nativeauthenticator.__file__), "templates")]
c.NativeAuthenticator.enable_signup = False
c.NativeAuthenticator.open_signup = False
c.NativeAuthenticator.minimum_password_length = @MIN_PASSWORD@
c.NativeAuthenticator.check_common_password = True
c.Authenticator.allowed_users = set(members)
# A member gone from the file no longer signs in, whatever the database still holds.
c.Authenticator.allow_existing_users = False
c.Authenticator.admin_users = set(team["admins"])


# One server at a time chooses its GPUs and is created, so the next one's choice sees it
# (tfimg counts a GPU as held by the containers labelled with it).
gpu_turn = asyncio.Lock()


class TfimgSpawner(DockerSpawner):
    """DockerSpawner, creating for each member the container tfimg planned for her: her
    image, mounts, environment, user, limits and labels, on her own network, with the
    GPUs tfimg chooses for her as it starts."""

    def profiles(self):
        """Her servers: one per spec she may start from, her `spec` first."""
        return members[self.user.name]

    def profile(self):
        """The server she asked for (`spec` in her options: the form's, or the API's
        JSON), else her first; a spec that is not hers is refused."""
        hers = self.profiles()
        wanted = (self.user_options or {}).get("spec")
        if not wanted:
            return hers[0]
        for profile in hers:
            if profile["spec"] == wanted:
                return profile
        offered = ", ".join(profile["spec"] for profile in hers)
        raise web.HTTPError(400, f"`{wanted}` is not one of your environments; yours: {offered}")

    async def choose_gpus(self, profile):
        """The GPUs her server takes now, by tfimg's own rules (`tfimg hub gpus`)."""
        ask = {
            "name": profile["name"],
            "gpus": profile["gpus"],
            "shared": profile["shared_gpus"],
            "nvidia": team["gpu_host"],
        }
        process = await asyncio.create_subprocess_exec(
            "@TFIMG@", "hub", "gpus",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin", "HOME": "/root", "TFIMG_CONFIG": "/dev/null", "NO_COLOR": "1"},
        )
        out, err = await process.communicate(json.dumps(ask).encode())
        if process.returncode != 0:
            raise RuntimeError(f"no GPUs for your server: {err.decode(errors='replace').strip()}")
        return json.loads(out)

    async def start(self):
        if not self.profile()["gpus"]:
            return await self.start_with(None)
        async with gpu_turn:
            return await self.start_with(await self.choose_gpus(self.profile()))

    async def start_with(self, grant):
        profile = self.profile()
        self.image = profile["image"]
        self.network_name = profile["network"]
        self.environment = dict(profile["env"])
        self.extra_create_kwargs = {"labels": profile["labels"]}
        if profile["user"]:
            self.extra_create_kwargs["user"] = profile["user"]
        host_config = {
            "binds": profile["binds"],
            "cap_drop": profile["cap_drop"],
            "security_opt": profile["security_opt"],
            "shm_size": profile["shm_size"],
        }
        if profile["mem_limit"] is not None:
            host_config["mem_limit"] = profile["mem_limit"]
        if profile["nano_cpus"] is not None:
            host_config["nano_cpus"] = profile["nano_cpus"]
        if grant:
            self.extra_create_kwargs["labels"] = {**profile["labels"], **grant["labels"]}
            self.environment.update(grant["env"])
            host_config["device_requests"] = grant["device_requests"]
            if grant["runtime"]:
                host_config["runtime"] = grant["runtime"]
        self.extra_host_config = host_config
        return await super().start()


def options_form(spawner):
    """A member with `choices:` picks the spec her server starts from (the one she
    picked last is selected); with one spec there is nothing to ask."""
    hers = spawner.profiles()
    if len(hers) < 2:
        return ""
    last = (spawner.user_options or {}).get("spec", hers[0]["spec"])
    options = "\n".join(
        '<option value="{spec}"{selected}>{spec}: {description}</option>'.format(
            spec=html.escape(profile["spec"]),
            description=html.escape(profile["description"]),
            selected=" selected" if profile["spec"] == last else "",
        )
        for profile in hers
    )
    return (
        '<label for="tfimg-spec">Environment</label>\n'
        f'<select class="form-control" id="tfimg-spec" name="spec" required autofocus>\n{options}\n</select>\n'
    )


def options_from_form(formdata):
    return {"spec": formdata.get("spec", [""])[0]}


c.JupyterHub.spawner_class = TfimgSpawner
c.TfimgSpawner.options_form = options_form
c.TfimgSpawner.options_from_form = options_from_form
c.DockerSpawner.name_template = team["team"] + "-{username}"
c.DockerSpawner.cmd = ["jupyterhub-singleuser"]
c.DockerSpawner.use_internal_ip = True
c.DockerSpawner.pull_policy = "never"
# A stopped server's container goes: the next start is created from the current file
# (and image); her data is on her mounts.
c.DockerSpawner.remove = True
c.DockerSpawner.http_timeout = 120
c.DockerSpawner.start_timeout = 180
c.Spawner.default_url = "/lab"

# Idle servers (`idle: {containers: ...}` in the team file): jupyterhub-idle-culler stops
# a server nobody used for that long; her data stays, and she starts it again from the
# hub's home page.
if team["idle_servers"]:
    idle = int(team["idle_servers"])
    c.JupyterHub.services = [
        {
            "name": "idle-culler",
            "command": [
                sys.executable, "-m", "jupyterhub_idle_culler",
                f"--timeout={idle}", f"--cull-every={max(10, min(300, idle // 4))}",
            ],
        }
    ]
    c.JupyterHub.load_roles = [
        {
            "name": "idle-culler",
            "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
            "services": ["idle-culler"],
        }
    ]
