#!/bin/sh
# Build nvtop (https://github.com/Syllo/nvtop, GPL-3; its code is not part of gputop) from its
# source with NVIDIA support only, into tests/_build/nvtop (ignored by git), for bench_overhead.py
# to run beside gputop and nvitop on the fake libnvidia-ml.so.1 (nvtop dlopens libnvidia-ml.so.1,
# so LD_LIBRARY_PATH picks the fake one).
#
#   apt-get install -y cmake libncurses-dev
#   sh tests/bench/build_nvtop.sh [SOURCE]
#
# SOURCE: a checkout of nvtop, or a bare git directory of one (its HEAD is exported), or nothing
# to clone it from GitHub. Prints the path of the binary.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
out="$here/tests/_build/nvtop"
source=${1:-}
rm -rf "$out/src" "$out/build"
mkdir -p "$out/src"
if [ -z "$source" ]; then
    git clone --depth 1 https://github.com/Syllo/nvtop.git "$out/src"
elif [ -f "$source/CMakeLists.txt" ]; then
    cp -r "$source/." "$out/src"
else
    git --git-dir="$source" archive HEAD | tar -x -C "$out/src"
fi
cmake -S "$out/src" -B "$out/build" -DCMAKE_BUILD_TYPE=Release \
    -DNVIDIA_SUPPORT=ON -DAMDGPU_SUPPORT=OFF -DRADEON_SUPPORT=OFF -DINTEL_SUPPORT=OFF \
    -DMSM_SUPPORT=OFF -DAPPLE_SUPPORT=OFF -DPANFROST_SUPPORT=OFF -DPANTHOR_SUPPORT=OFF \
    -DASCEND_SUPPORT=OFF -DV3D_SUPPORT=OFF -DTPU_SUPPORT=OFF -DROCKCHIP_SUPPORT=OFF \
    -DMETAX_SUPPORT=OFF -DENFLAME_SUPPORT=OFF -DTENSTORRENT_SUPPORT=OFF -DIXML_SUPPORT=OFF \
    -DBUILD_TESTING=OFF >"$out/cmake.log"
cmake --build "$out/build" -j 2 >"$out/build.log"
echo "$out/build/src/nvtop"
