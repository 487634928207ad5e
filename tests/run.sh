#!/usr/bin/env bash
# Runs every test of fxray on a fresh Debian machine, set-up included:
#   1. installs what the UI tests need (Mesa's software Vulkan for egui_kittest snapshots),
#      Debian's OpenSSH (the remote tests start their own sshd on 127.0.0.1), and Xvfb with
#      xdotool (the .deb test starts the real window from the package's desktop entry),
#   2. checks formatting and lints,
#   3. runs `cargo test` (unit, integration, CLI and UI tests against the real debug trees in tests/fixtures),
#   4. runs the end-to-end tests with real PyTorch (CPU), msprobe, transformers and tlparse,
#      installed from PyPI into a
#      cached virtual environment ($FXRAY_TORCH_VENV, default ~/.cache/fxray/venv-torch; reused
#      when present, set up in the background while the tests build).
# .ci/run calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
for p in mesa-vulkan-drivers libvulkan1 libgl1-mesa-dri libegl1 libegl-mesa0 \
    openssh-server openssh-client xvfb xdotool man-db; do
    dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing: ${need_pkgs[*]}"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
    else
        echo "warning: missing ${need_pkgs[*]} (run as root on Debian to install); UI snapshot tests may fail" >&2
    fi
fi

# winit and wgpu probe Wayland first; give them a private runtime dir so the UI tests' logs
# are not filled with "XDG_RUNTIME_DIR is invalid".
if [ -z "${XDG_RUNTIME_DIR:-}" ]; then
    XDG_RUNTIME_DIR="$(mktemp -d)"
    chmod 700 "$XDG_RUNTIME_DIR"
    export XDG_RUNTIME_DIR
fi

venv="${FXRAY_TORCH_VENV:-$HOME/.cache/fxray/venv-torch}"
torch_log="$(mktemp)"
(
    # torch for graphs and traces, mindstudio-probe for msprobe dumps and `msprobe compare`,
    # transformers for real architectures (tiny configs, random init), tlparse for the trace log.
    # mindstudio-probe is pinned: the msprobe e2e test holds fresh dump keys against committed ones.
    if ! "$venv/bin/python" -c "import torch, msprobe, transformers" >/dev/null 2>&1 \
        || [ ! -x "$venv/bin/tlparse" ]; then
        { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
            "$venv/bin/pip" install --quiet --disable-pip-version-check \
                torch mindstudio-probe==26.2.0 transformers tlparse || exit 1
    fi
    # Mixtral and Qwen2-MoE with experts looped over a ModuleList exist only in transformers 4.x;
    # module_truth_hf.py imports it from its own folder, beside transformers 5 in the venv.
    legacy="${FXRAY_TRANSFORMERS_4:-$HOME/.cache/fxray/transformers-4.46.3}"
    if [ ! -f "$legacy/transformers/__init__.py" ]; then
        "$venv/bin/pip" install --quiet --disable-pip-version-check --target "$legacy" --no-deps \
            transformers==4.46.3 tokenizers==0.20.3 huggingface-hub==0.26.5 \
            requests charset-normalizer idna urllib3 certifi || exit 1
    fi
) >"$torch_log" 2>&1 &
torch_setup=$!

# Elapsed seconds per step, so a slow CI run says where its time went.
step() { echo "== ${SECONDS}s: $*"; }
step "fmt"
cargo fmt --check
step "clippy"
cargo clippy --all-targets --quiet -- -D warnings
step "cargo test"
status=0
cargo test --no-fail-fast 2>&1 || status=$?

step "waiting for the PyTorch environment ($venv)"
if wait "$torch_setup"; then
    step "end-to-end tests with real PyTorch"
    FXRAY_TEST_PYTHON="$venv/bin/python" cargo test --test it e2e_torch -- --ignored 2>&1 || status=$?
else
    cat "$torch_log" >&2
    echo "error: could not install torch into $venv (see above)" >&2
    status=1
fi
step "done (status $status)"
exit "$status"
