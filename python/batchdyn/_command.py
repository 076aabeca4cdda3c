"""The `batchdyn` command of a pip-installed batchdyn: runs the C++ executable the wheel carries
(batchdyn/bin/batchdyn) with the same arguments, exit code and streams."""
import os
import sys


def executable():
    """The path of the `batchdyn` command inside the installed package."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "batchdyn")


def main():
    path = executable()
    if not os.path.exists(path):
        sys.exit(f"batchdyn: the command is not part of this installation ({path} is missing); "
                 "it is built by `pip install .` or by CMake (build/<dir>/batchdyn)")
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    main()
