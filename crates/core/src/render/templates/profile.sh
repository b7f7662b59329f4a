# Login shells (SSH, Jupyter terminals) reset PATH in /etc/profile: put the image's
# folders back in front (the venv, and on GPU images the CUDA tools XLA runs).
for folder in @LOGIN_PATH@; do
    case ":$PATH:" in
        *":$folder:"*) ;;
        *) PATH="$folder:$PATH" ;;
    esac
done
unset folder
VIRTUAL_ENV=@VENV@
export PATH VIRTUAL_ENV
