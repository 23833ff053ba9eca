"""The build step of kprop's Python package (pyproject.toml holds its metadata).

The package is python/kprop/*.py and the extension _kprop, which links libkprop.so; CMake
builds both (target kprop_python) against the torch of the Python that runs this build,
and `cmake --install --component kprop_python_package` puts them side by side, the
extension finding libkprop.so by its rpath $ORIGIN. Offline, into a virtual environment
that sees Debian's torch:

    python3 -m venv --system-site-packages .venv
    .venv/bin/pip install --no-build-isolation .        # or -e . (editable)

Environment (docs/pytest.md):
  KPROP_BUILD_DIR    the CMake build folder, relative to this folder. Default build-pip,
                     configured here for this Python and its torch. A folder that is
                     configured already (build, say) is used as it is: only kprop_python is
                     built there, so a build that has it costs nothing.
  KPROP_SKIP_BUILD=1 install what KPROP_BUILD_DIR holds, building nothing (the tests
                     install the build under test)
  KPROP_BUILD_TYPE   CMAKE_BUILD_TYPE of a new configuration (default RelWithDebInfo)
  KPROP_CMAKE_ARGS   more arguments for the configure step (shell words)
  KPROP_STRIP=0      keep the debug information (installed stripped otherwise)
  CMAKE_PREFIX_PATH  where CMake finds more packages (torch's own prefix is added here)
  CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default: every core)
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = os.path.dirname(os.path.abspath(__file__))
TARGET = "kprop_python"
COMPONENT = "kprop_python_package"
LIBRARY = "libkprop.so"


class KpropExtension(Extension):
    """kprop._kprop, built by CMake rather than by setuptools' compiler."""

    def __init__(self):
        super().__init__("kprop._kprop", sources=[])


def _say(*words):
    print("kprop setup.py:", *words, flush=True)


def _cmake():
    # On PATH, else beside this Python (pip's cmake in a venv that is not activated).
    found = shutil.which("cmake") or shutil.which("cmake", path=os.path.dirname(sys.executable))
    if not found:
        sys.exit("kprop setup.py: cmake not found (Debian: apt install cmake)")
    return found


def _run(args):
    _say("$", " ".join(shlex.quote(a) for a in args))
    subprocess.run(args, check=True)


def _torch_identity():
    """What the build depends on: this Python and the torch it imports."""
    import torch
    return f"{os.path.realpath(sys.executable)} {sysconfig.get_config_var('EXT_SUFFIX')} " \
           f"torch {torch.__version__} at {os.path.dirname(torch.__file__)}"


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir, configure = self._build_dir()
        if os.environ.get("KPROP_SKIP_BUILD") == "1":
            if configure:
                sys.exit("kprop setup.py: KPROP_SKIP_BUILD=1 needs a KPROP_BUILD_DIR that is "
                         "configured and built")
        else:
            self._build(build_dir, configure)
        stage = os.path.join(os.path.abspath(self.build_temp), "kprop-stage")
        shutil.rmtree(stage, ignore_errors=True)
        strip = [] if os.environ.get("KPROP_STRIP") == "0" else ["--strip"]
        _run([_cmake(), "--install", build_dir, "--component", COMPONENT, "--prefix", stage]
             + strip)
        extension = os.path.basename(self.get_ext_fullpath(ext.name))
        built = os.path.join(stage, "kprop", extension)
        if not os.path.exists(built):
            there = sorted(os.listdir(os.path.join(stage, "kprop")))
            sys.exit(f"kprop setup.py: {build_dir} built {', '.join(there)}, not {extension}: "
                     f"it is configured for another Python than {sys.executable}")
        dest = os.path.dirname(self.get_ext_fullpath(ext.name))
        os.makedirs(dest, exist_ok=True)
        for name in (extension, LIBRARY):
            shutil.copy2(os.path.join(stage, "kprop", name), os.path.join(dest, name))
        self._imports(dest)

    def _build(self, build_dir, configure):
        if configure:
            self._configure(build_dir)
        jobs = [] if os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") else \
            ["-j", str(self.parallel or os.cpu_count() or 1)]
        try:
            _run([_cmake(), "--build", build_dir, "--target", TARGET] + jobs)
        except subprocess.CalledProcessError:
            sys.exit(f"kprop setup.py: building {TARGET} in {build_dir} failed (above). A build "
                     f"without that target skipped the Python entry: its configure step says "
                     f"why (a Python without torch, another torch than kprop's libtorch, no "
                     f"pybind11).")

    def _build_dir(self):
        """The CMake build folder and whether to configure it."""
        given = os.environ.get("KPROP_BUILD_DIR")
        if given:
            build_dir = os.path.join(SOURCE, given)
            return build_dir, not os.path.exists(os.path.join(build_dir, "CMakeCache.txt"))
        # build-pip beside build: the same depth, so that ccache's paths relative to the
        # source (CMakeLists.txt) find build's objects. One configuration per Python and
        # torch: another one starts from a new cache.
        build_dir = os.path.join(SOURCE, "build-pip")
        stamp = os.path.join(build_dir, "kprop-python.txt")
        identity = _torch_identity()
        if not os.path.exists(stamp) or open(stamp).read() != identity:
            for stale in ("CMakeCache.txt", "kprop-python.txt"):
                if os.path.exists(os.path.join(build_dir, stale)):
                    os.remove(os.path.join(build_dir, stale))
        os.makedirs(build_dir, exist_ok=True)
        with open(stamp, "w") as f:
            f.write(identity)
        return build_dir, True

    def _configure(self, build_dir):
        import torch
        prefixes = [torch.utils.cmake_prefix_path]
        try:
            import pybind11  # pip's pybind11 (a torch wheel's machine); Debian's is found anyway
            prefixes.append(pybind11.get_cmake_dir())
        except (ImportError, AttributeError):
            pass
        args = [_cmake(), "-S", SOURCE, "-B", build_dir,
                "-DCMAKE_BUILD_TYPE=" + os.environ.get("KPROP_BUILD_TYPE", "RelWithDebInfo"),
                "-DKPROP_FUZZERS=OFF", "-DPython3_EXECUTABLE=" + sys.executable,
                "-DCMAKE_PREFIX_PATH=" + ";".join(prefixes)]
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")) and shutil.which("ninja"):
            args += ["-G", "Ninja"]
        _run(args + shlex.split(os.environ.get("KPROP_CMAKE_ARGS", "")))

    def _imports(self, dest):
        """The extension must load under this Python, beside its torch (one libtorch per
        process): import the package from a scratch copy and list its kernels."""
        scratch = os.path.join(os.path.abspath(self.build_temp), "kprop-import")
        shutil.rmtree(scratch, ignore_errors=True)
        os.makedirs(os.path.join(scratch, "kprop"))
        for f in glob.glob(os.path.join(SOURCE, "python", "kprop", "*.py")) + \
                glob.glob(os.path.join(dest, "*.so")):
            shutil.copy2(f, os.path.join(scratch, "kprop"))
        probe = ("import sys; sys.path.insert(0, sys.argv[1]); import kprop; "
                 "print(len(kprop.kernels()), 'kernels')")
        done = subprocess.run([sys.executable, "-c", probe, scratch], capture_output=True,
                              text=True)
        if done.returncode != 0:
            sys.exit(f"kprop setup.py: the built package does not import under "
                     f"{sys.executable}:\n{done.stderr}")
        _say(f"imports under {sys.executable}: {done.stdout.strip()}")

    def copy_extensions_to_source(self):
        # Editable installs: the extension goes to python/kprop/, libkprop.so with it.
        super().copy_extensions_to_source()
        package = self.get_finalized_command("build_py").get_package_dir("kprop")
        self.copy_file(os.path.join(self.build_lib, "kprop", LIBRARY),
                       os.path.join(package, LIBRARY))


setup(
    ext_modules=[KpropExtension()],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own folders beside CMake's, not inside the main build folder.
    options={"build": {"build_base": os.path.join(SOURCE, "build-pip", "setuptools")}},
)
