"""`just bench`'s rows 10-12: cold builds of cpu-jupyter and gpu-jupyter against docker
build of the same rendered context, and the disk the six built-ins take built together."""
import sys
import time

from common import CA, TFIMG, measure, sh

BUILT_INS = ["cpu-headless", "cpu-jupyter", "cpu-ssh", "gpu-headless", "gpu-jupyter", "gpu-ssh"]


def cold_build(number, spec):
    """`tfimg build --no-cache` (verification included) vs `docker build --no-cache` of the
    context `tfimg render` writes for the same spec: what a user who keeps the Dockerfile
    by hand runs. Both download every wheel again; the base image stays."""
    def row(work, runs):
        context = work / f"cold-{spec}"
        sh(TFIMG, "render", spec, "-o", str(context), "--ca-cert", CA, cwd=work)
        tag = f"tfbench/cold-{spec}:docker"

        def forget_docker_image():
            sh("docker", "image", "rm", "-f", tag, check=False)
            # The image tfimg's --no-cache build superseded, left without a tag.
            for image in set(sh("docker", "images", "-q", "--filter", "dangling=true",
                                "--filter", f"label=io.tfimg.spec={spec}").stdout.split()):
                sh("docker", "rmi", image, check=False)

        return measure(
            f"{number}. cold build of {spec} (tfimg build --no-cache vs docker build --no-cache of its rendered context)",
            lambda i: sh(TFIMG, "build", spec, "--no-cache", "--ca-cert", CA, "--progress", "plain", cwd=work),
            lambda i: sh("docker", "build", "--no-cache", "-q", "-t", tag, str(context)),
            1, cleanup=forget_docker_image, target="<= 1.1", warm_up=False,
        )
    return row


def image_history(image):
    """The layers of `image`, root first: (key, bytes), where the key is the chain of
    layers up to this one (layer ids where Docker has them, else the command)."""
    out = sh("docker", "history", "--no-trunc", "--human=false", "--format",
             "{{.ID}}\t{{.Size}}\t{{.CreatedBy}}", image).stdout
    chain, layers = [], []
    for line in reversed(out.splitlines()):
        layer, size, created_by = line.split("\t", 2)
        chain.append(layer if layer != "<missing>" else created_by)
        layers.append((tuple(chain), int(size)))
    return layers


def disk_of(images):
    """Bytes on disk for `images` together: every shared layer counted once."""
    seen = {}
    for image in images:
        seen.update(image_history(image))
    return sum(seen.values())


def forget_built_ins():
    """Every image of the six built-ins, tagged or superseded, so row 12 starts cold."""
    for spec in BUILT_INS:
        for ref in sh("docker", "images", "--format", "{{.Repository}}:{{.Tag}}", f"tfimg/{spec}").stdout.split():
            sh("docker", "rmi", "-f", ref, check=False)
        for image in set(sh("docker", "images", "-q", "--filter", f"label=io.tfimg.spec={spec}").stdout.split()):
            sh("docker", "rmi", "-f", image, check=False)


def row_disk(work, runs):
    """The six built-ins built cold on one machine, one after another as a user would (the
    base image stays), vs gpu-jupyter and cpu-jupyter alone: what sharing the system
    Python and TensorFlow layers saves (no sharing at all would be about 3x). Each build's
    time is printed, and whether it downloaded a TensorFlow wheel: after the first variant
    of a family, none should."""
    forget_built_ins()
    order = ["cpu-jupyter", "cpu-ssh", "cpu-headless", "gpu-jupyter", "gpu-ssh", "gpu-headless"]
    builds = {}
    for spec in order:
        start = time.perf_counter()
        done = sh(TFIMG, "build", spec, "--ca-cert", CA, "--progress", "plain", cwd=work)
        seconds = time.perf_counter() - start
        output = done.stdout + done.stderr
        downloaded = "Downloading tensorflow" in output
        builds[spec] = {"seconds": seconds, "downloaded_tensorflow": downloaded}
        print(f"  built {spec} in {seconds:.0f} s; downloaded a TensorFlow wheel: {'yes' if downloaded else 'no'}", file=sys.stderr)
    tags = {spec: current_tag(spec) for spec in BUILT_INS}
    six = disk_of(tags.values()) / 1e9
    two = disk_of([tags["gpu-jupyter"], tags["cpu-jupyter"]]) / 1e9
    print(f"  per image: " + ", ".join(f"{spec} {disk_of([tag]) / 1e9:.2f} GB" for spec, tag in tags.items()), file=sys.stderr)
    row = {
        "name": "12. disk of the six built-ins built cold together vs gpu-jupyter and cpu-jupyter alone",
        "unit": "GB", "target": "<= 1.3",
        "tfimg": {"median": six, "min": six, "max": six},
        "alternative": {"median": two, "min": two, "max": two},
        "ratio": six / two,
        "builds": builds,
    }
    print(f"  {row['name']}: {six:.2f} GB vs {two:.2f} GB, ratio {row['ratio']:.2f}", file=sys.stderr)
    return row


def current_tag(spec):
    """The tag `tfimg build` gives a spec's image: `tfimg/<name>:<tensorflow>`."""
    shown = sh(TFIMG, "show", spec).stdout.splitlines()
    version = next(line.split(": ", 1)[1] for line in shown if line.startswith("tensorflow: "))
    return f"tfimg/{spec}:{version}"
