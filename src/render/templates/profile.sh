# Login shells (SSH, Jupyter terminals) reset PATH in /etc/profile: put the venv back.
case ":$PATH:" in
    *":@VENV@/bin:"*) ;;
    *) PATH="@VENV@/bin:$PATH" ;;
esac
VIRTUAL_ENV=@VENV@
export PATH VIRTUAL_ENV
