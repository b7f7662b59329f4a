# The lock (`@LOCK_FILE@`): the installed distributions are exactly the lock's. Only
# site-packages is read, as `pip freeze` does: importing setuptools (TensorFlow does)
# puts its vendored copies of other distributions on sys.path.
try:
    import sysconfig

    locked = json.loads(r"""@LOCK_EXPECTED@""")
    installed = {}
    folders = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    for distribution in importlib.metadata.distributions(path=folders):
        name = re.sub(r"[-_.]+", "-", distribution.metadata["Name"]).lower()
        installed[name] = distribution.version
    differences = []
    for name in sorted(set(locked) | set(installed)):
        if name not in installed:
            differences.append("{}=={} is missing".format(name, locked[name]))
        elif name not in locked:
            differences.append("{}=={} is not in the lock".format(name, installed[name]))
        elif installed[name] != locked[name]:
            differences.append("{} is {}, the lock has {}".format(name, installed[name], locked[name]))
    check(
        "installed distributions equal the lock",
        not differences,
        "; ".join(differences) or "{} distributions".format(len(installed)),
    )
except Exception as error:
    check("installed distributions equal the lock", False, repr(error))

