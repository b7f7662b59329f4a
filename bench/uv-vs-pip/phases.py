#!/usr/bin/env python3
"""Split the TensorFlow step and the spec step of a stamped build log into download,
install and layer-commit phases (from pip's/uv's own progress lines)."""
import re, sys
lines = []
for raw in open(sys.argv[1], errors="replace"):
    t, _, rest = raw.partition(" ")
    try:
        lines.append((float(t), re.sub(r"\x1b\[[0-9;]*m", "", rest).rstrip()))
    except ValueError:
        pass
steps = [i for i, (_, l) in enumerate(lines) if re.match(r"Step \d+/\d+ :", l) or l.startswith("Successfully built")]
for a, b in zip(steps, steps[1:]):
    head = lines[a][1]
    if "mkdir -p /opt/tfimg" not in head and "jupyterlab" not in head:
        continue
    name = "tensorflow" if "mkdir -p /opt/tfimg" in head else "spec"
    t0, t_end = lines[a][0], lines[b][0]
    body = lines[a + 1:b]
    def first(pat):
        return next((t for t, l in body if re.search(pat, l)), None)
    def last(pat):
        return next((t for t, l in reversed(body) if re.search(pat, l)), None)
    # pip: downloads end at "Installing collected packages"; uv: at "Prepared N packages"
    dl_end = first(r"^Installing collected packages|Prepared \d+ packages?")
    inst_end = last(r"^Successfully installed|Installed \d+ packages?")
    compiled = last(r"Bytecode compiled")  # uv compiles after installing; pip while installing
    if compiled:
        inst_end = compiled
    removing = first(r"Removing intermediate container")
    out = [f"{name}: step {t_end - t0:.1f}s"]
    if dl_end: out.append(f"resolve+download {dl_end - t0:.1f}s")
    if dl_end and inst_end: out.append(f"install(+compile) {inst_end - dl_end:.1f}s")
    if inst_end: out.append(f"after install (commit layer) {t_end - inst_end:.1f}s")
    print(", ".join(out))
