# The lock (`@LOCK_FILE@`): the installed distributions are exactly the lock's. Only
# site-packages is read, as `pip freeze` does: importing setuptools (TensorFlow does)
# puts its vendored copies of other distributions on sys.path. A spec without its own
# lock pins only the layers it inherits: those distributions must be installed; what the
# spec's own pip packages add or move is listed, not refused.
try:
    import sysconfig

    locked = json.loads(r"""@LOCK_EXPECTED@""")
    whole = @LOCK_WHOLE@
    installed = {}
    folders = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    for distribution in importlib.metadata.distributions(path=folders):
        name = re.sub(r"[-_.]+", "-", distribution.metadata["Name"]).lower()
        installed[name] = distribution.version
    differences = []
    moved = []
    for name in sorted(set(locked) | set(installed)):
        if name not in installed:
            differences.append("{}=={} is missing".format(name, locked[name]))
        elif name not in locked:
            if whole:
                differences.append("{}=={} is not in the lock".format(name, installed[name]))
        elif installed[name] != locked[name]:
            change = "{} is {}, the lock has {}".format(name, installed[name], locked[name])
            (differences if whole else moved).append(change)
    if whole:
        check(
            "installed distributions equal the lock",
            not differences,
            "; ".join(differences) or "{} distributions".format(len(installed)),
        )
    else:
        detail = "; ".join(differences) or "{} distributions as locked".format(len(locked) - len(moved))
        if moved and not differences:
            detail += "; moved by the spec's own pip packages: " + "; ".join(moved)
        check("the inherited lock's distributions are installed", not differences, detail)
except Exception as error:
    check("installed distributions equal the lock", False, repr(error))
