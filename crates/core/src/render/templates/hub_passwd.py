# Sets a member's password in the hub's database (`tfimg hub passwd`): read from @PASSWORD@
# (private to the hub, removed at once), hashed with bcrypt by NativeAuthenticator's
# own model, and marked authorised, so she signs in with it and then changes it herself.
# `passwd.py NAME -` reads it from stdin instead (its first line): a hub on Kubernetes,
# where `tfimg k8s` mounts this script (`kubectl exec -i deploy/hub -- ...`).
import os
import sys

import bcrypt
from jupyterhub import orm
from nativeauthenticator.orm import UserInfo

path = "@PASSWORD@"
if sys.argv[2:] == ["-"]:
    password = sys.stdin.buffer.readline().rstrip(b"\r\n")
else:
    try:
        with open(path, "rb") as password_file:
            password = password_file.read()
    finally:
        if os.path.exists(path):
            os.remove(path)
name = sys.argv[1]
if not 8 <= len(password) <= 72:
    sys.exit("tfimg: a password is 8 to 72 bytes")
session = orm.new_session_factory("sqlite:///@STATE@/jupyterhub.sqlite")()
# NativeAuthenticator keeps its table beside JupyterHub's; the hub makes it at its start.
UserInfo.__table__.create(session.get_bind(), checkfirst=True)
hashed = bcrypt.hashpw(password, bcrypt.gensalt())
user = session.query(UserInfo).filter(UserInfo.username == name).first()
if user is None:
    session.add(UserInfo(username=name, password=hashed, is_authorized=True))
else:
    user.password = hashed
    user.is_authorized = True
session.commit()
print(f"tfimg: password of `{name}` set")
